/* host/check/check_rules.h - `passhost --check-rules PLUGIN [--instances N]
 * [--seed S] [--rule NAME] [--repro-dir DIR]`: the rule checker
 * (passhost/rulecheck.h) on one pattern pass, a table per rule. */
#ifndef PASSHOST_HOST_CHECK_RULES_H
#define PASSHOST_HOST_CHECK_RULES_H

#include <stdio.h>

/* argv[1] is "--check-rules".  Prints the table on out; returns an exit
 * code (host/base/exit.h): 0 when no rule failed, HOST_EXIT_MISMATCH when
 * one did, HOST_EXIT_USAGE / HOST_EXIT_PLUGIN otherwise (a message on
 * stderr). */
int host_check_rules_main(int argc, char **argv, FILE *out);

#endif
