/* Scenario files (see README.md) and the MIG profile tables. */
#ifndef FG_SCENARIO_H
#define FG_SCENARIO_H

#include <stddef.h>

#include "fg_state.h"

typedef enum { FG_FAM_GENERIC = 0, FG_FAM_A100_40 = 1, FG_FAM_A100_80 = 2, FG_FAM_H100_80 = 3 } fg_family_t;

typedef struct {
  char name[16]; /* "3g.40gb" */
  unsigned id;   /* GPU instance profile id: 19 for 1g.10gb, 9 for 3g.40gb, … */
  unsigned slices, mem_slices, sm, mem_mib, ce, dec, enc, jpg, ofa, max_instances;
  unsigned nvml; /* NVML_GPU_INSTANCE_PROFILE_* index */
} fg_profile_t;

/* The i-th profile of this GPU (0..6, the order of electron/engine/mig/profiles.ts); 0 past the end. */
FG_HIDDEN int fg_profile_at(const fg_gpu_t *g, int i, fg_profile_t *out);
/* By NVML_GPU_INSTANCE_PROFILE_* index (what nvmlDeviceGetGpuInstanceProfileInfoV takes); 0 if none. */
FG_HIDDEN int fg_profile_by_id(const fg_gpu_t *g, unsigned nvml_index, fg_profile_t *out);
/* By GPU instance profile id (what `nvidia-smi mig -cgi` takes); 0 if none. */
FG_HIDDEN int fg_profile_by_gi_id(const fg_gpu_t *g, unsigned id, fg_profile_t *out);
/* May an instance of p start at memory slice `start`? */
FG_HIDDEN int fg_mig_start_allowed(const fg_profile_t *p, unsigned start);
/* Fill a MIG slot from its profile (gi/ci already set); generation > 0 derives a fresh UUID. */
FG_HIDDEN void fg_mig_fill(const fg_gpu_t *g, fg_mig_t *mi, const fg_profile_t *p, unsigned start, unsigned generation);

/* Parse `path` into a zeroed state image. 0 on success, else err holds
 * "FILE:LINE: problem". */
FG_HIDDEN int fg_scenario_load(const char *path, fg_state_t *st, char *err, size_t errlen);

/* "512M", "2G", "1048576" (binary suffixes K M G T, optional iB/B): 0 and *out, or -1 when malformed. */
int fg_parse_size(const char *s, unsigned long long *out);

#endif
