/* park.c: a parked job asks for its GPU memory back (see park.c). */
#ifndef GS_PARK_H
#define GS_PARK_H

#include "preload.h"

/* The job's park file (GPUSHARE_PARK_FILE): the engine makes it, the job's processes write it. */
#define GS_PARK_MAGIC 0x31304b5241505347ull /* "GSPARK01" */
typedef struct {
  uint64_t magic;   /* 0: GS_PARK_MAGIC, written by the engine */
  uint32_t in_call; /* 8: threads of the job inside a CUDA call that may wait for a restore */
  uint32_t reserved;
  uint64_t calls;        /* 16: such calls so far */
  uint64_t last_call_ns; /* 24: CLOCK_MONOTONIC when one last returned (the job was not idle then) */
} gs_park_file_t;

GS_HIDDEN void gs_park_enter(void);
GS_HIDDEN void gs_park_leave(void);
static inline CUresult gs_park_left(CUresult rc) {
  gs_park_leave();
  return rc;
}
/* `call` published as "in a CUDA call" while it runs: a parked job waits in it for its memory. */
#define GS_PARK_CALL(call) (gs_park_enter(), gs_park_left(call))

#endif
