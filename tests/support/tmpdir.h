/* tests/support/tmpdir.h - a scratch folder for each test, and the small
 * file helpers of tests that work on files.
 *
 * A test's setup makes a new empty folder /tmp/ph_test_NAME.XXXXXX with
 * tk_tmpdir_make and its teardown removes it, with everything in it, with
 * tk_tmpdir_remove.  There is one folder at a time (Check runs each test in
 * its own fixture).  Test plugins are copied from PH_BUILD_DIR/test-plugins.
 *
 * Failures are Check assertions (ck_assert_msg), so these helpers are only
 * for use inside a Check test or fixture.  Ownership is stated on each
 * function: returned paths are static buffers, tk_slurp's text is the
 * caller's to free. */
#ifndef PASSHOST_TESTS_TMPDIR_H
#define PASSHOST_TESTS_TMPDIR_H

#include <stddef.h>

/* Make a new empty folder /tmp/ph_test_NAME.XXXXXX (asserting success) and
 * return its path: a static buffer, valid until the next tk_tmpdir_make. */
const char *tk_tmpdir_make(const char *name);
/* Remove the folder of tk_tmpdir_make and everything in it. */
void tk_tmpdir_remove(void);
/* FOLDER/name, in a static ring of 64 buffers (enough for one test): each
 * is valid until 64 more calls. */
const char *tk_tpath(const char *name);
/* Make the folder FOLDER/plugins and copy the NULL-terminated test plugins
 * NAME (PH_BUILD_DIR/test-plugins/NAME.so) into it.  Returns its path: a
 * static buffer, valid until the next call. */
const char *tk_tmpdir_plugins(const char *const *names);

/* Copy the NULL-terminated test plugins NAME into the existing folder dir. */
void tk_copy_test_plugins(const char *dir, const char *const *names);
/* Copy the file from to `to` (a file or a folder) with cp(1), asserting
 * success. */
void tk_copy_file(const char *from, const char *to);
/* The whole file at path, NUL-terminated, with its size in *len (len may be
 * NULL); NULL when the file cannot be opened.  Caller frees. */
char *tk_slurp(const char *path, size_t *len);
/* 1 when path exists (as anything), else 0. */
int tk_exists(const char *path);
/* How many entries the folder dir holds besides . and .. (asserting it
 * opens). */
int tk_dir_entries(const char *dir);
/* The external-data file a save of FOLDER/name wrote, name.XXXXXX.data
 * (asserting there is at most one), in a static buffer; NULL when there
 * is none. */
const char *tk_data_file(const char *name);

#endif
