/* The fit rule's "when does it fit" (native/preload/src/gate_learned.c), on fixed gap histograms:
 * prints one JSON line per case; electron/engine/gate/launch-gate.fit-age.test.ts checks them.
 * Built from the library's own source with the gate's mappings stood in by plain memory. */
#include "../src/gate_learned.c"

#include <stdio.h>
#include <string.h>

gs_gate_map_t gs_g;
uint32_t gs_act_gen[GATE_MAX_SLOTS];
gate_activity_t *gs_activity_map(uint32_t i, uint32_t gen) { (void)i, (void)gen; return NULL; }

static void one(const char *name, const uint32_t *hist, uint64_t age_ns, uint64_t kernel_ns) {
  static gate_activity_t s;
  memset(&s, 0, sizeof s);
  memcpy(s.gap_hist, hist, sizeof s.gap_hist);
  uint64_t now = 1000000000ull, fits_at = 12345;
  s.last_launch_ns = now - age_ns - 2000000; /* its last kernel launched 2 ms before it went idle */
  s.idle_since_ns = now - age_ns;
  int unfit = kernel_unfit(&s, now, kernel_ns, &fits_at);
  long long fit_age = unfit && fits_at ? (long long)(fits_at - s.idle_since_ns) : -1;
  int before = fit_age > 0 ? unfit_at(s.gap_hist, (double)(fit_age - (long long)FIT_STEP_NS), (double)kernel_ns) : -1;
  int at = fit_age > 0 ? unfit_at(s.gap_hist, (double)fit_age, (double)kernel_ns) : -1;
  printf("{\"case\":\"%s\",\"unfit\":%d,\"fitAgeNs\":%lld,\"unfitStepBefore\":%d,\"unfitAt\":%d,\"stepNs\":%llu,\"lookaheadNs\":%llu}\n", name,
         unfit, fit_age, before, at, (unsigned long long)FIT_STEP_NS, (unsigned long long)FIT_LOOKAHEAD_NS);
}

int main(void) {
  /* the quick shape at load 0.7 as a high job learned it: quick relaunches in [2, 16) µs, Poisson gaps 0.25-16 ms */
  static const uint32_t quick[GATE_GAP_BUCKETS] = {1, 30, 29, 125, 5, 1, 1, 3, 6, 3, 7, 13, 11, 2};
  /* every gap in [0.5, 1) ms: a 1 ms kernel fits none of them at any age */
  static const uint32_t short_gaps[GATE_GAP_BUCKETS] = {[9] = 40};
  one("quick-relaunch-8us", quick, 8000, 1060000);
  one("quick-relaunch-40us", quick, 40000, 1060000);
  one("gaps-shorter-than-kernel", short_gaps, 8000, 1000000);
  return 0;
}
