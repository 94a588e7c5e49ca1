/* sdk/src/testing/testing_internal.h - what the files of the test harness
 * share (not exported). */
#ifndef PASSHOST_SDK_TESTING_INTERNAL_H
#define PASSHOST_SDK_TESTING_INTERNAL_H

#include <stdint.h>

/* The next seeded random value for dtype dt, as the random inputs of a
 * checked run have them (testing.h, ph_test_random_inputs): floats uniform
 * in [-1, 1) and exactly representable in dt, integers in [0, 4), bools 0
 * or 1.  *state advances. */
double test_random_value(int dt, uint64_t *state);

#endif
