/* host/base/version.h - the version of passhost, as --version, the reports
 * and ph_pipeline_version say it: the Makefile's VERSION (also passhost.pc's
 * and the man page's), given to the compiler as PASSHOST_VERSION. */
#ifndef PASSHOST_HOST_VERSION_H
#define PASSHOST_HOST_VERSION_H

#define HOST_VERSION PASSHOST_VERSION

#endif
