/* Linked into every internal test program of a dispatch build, which is compiled once per
 * kernel set (tests/meson.build). The program runs only when its set is the one under test:
 * CROWDBLEND_ISA names it, or the variable is unset (or "auto") and this CPU can run the set.
 * Otherwise it reports a TAP skip before main() runs, and so before any instruction of the set
 * does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simd/dispatch.h"

__attribute__((constructor)) static void kernel_gate(void)
{
    const char *name = cb_kernel_set_name(CB_KERNEL_SET);
    const char *want = getenv("CROWDBLEND_ISA");
    const char *missing = cb_cpu_missing(CB_KERNEL_SET);
    bool asked =
        want == NULL || want[0] == '\0' || strcmp(want, "auto") == 0 || strcmp(want, name) == 0;
    if (missing == NULL && asked) {
        return;
    }
    if (missing != NULL) {
        printf("1..0 # SKIP the %s kernel set: this CPU lacks %s\n", name, missing);
    } else {
        printf("1..0 # SKIP the %s kernel set: CROWDBLEND_ISA=%s selects another\n", name, want);
    }
    fflush(stdout);
    _Exit(0);
}
