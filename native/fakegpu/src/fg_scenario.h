/* Scenario files (see README.md) and the MIG profile tables. */
#ifndef FG_SCENARIO_H
#define FG_SCENARIO_H

#include <stddef.h>

#include "fg_state.h"

typedef enum { FG_FAM_GENERIC = 0, FG_FAM_A100_40 = 1, FG_FAM_A100_80 = 2, FG_FAM_H100_80 = 3 } fg_family_t;

typedef struct {
  char name[16]; /* "3g.40gb" */
  unsigned id, slices, mem_slices, sm, mem_mib, ce, dec, enc, jpg, ofa, max_instances;
} fg_profile_t;

/* Profile `id` (NVML_GPU_INSTANCE_PROFILE_*) for this GPU; 0 if unknown. */
FG_HIDDEN int fg_profile_by_id(const fg_gpu_t *g, unsigned id, fg_profile_t *out);

/* Parse `path` into a zeroed state image. 0 on success, else err holds
 * "FILE:LINE: problem". */
FG_HIDDEN int fg_scenario_load(const char *path, fg_state_t *st, char *err, size_t errlen);

#endif
