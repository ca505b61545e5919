/* The per-device execution engine: a fair ticket lock in shared memory that
 * survives holders which die or stall. */
#ifndef FG_CUDA_ENGINE_H
#define FG_CUDA_ENGINE_H

#include "fg_state.h"

/* Waits for the engine; returns the start time, sets *ticket. */
FG_HIDDEN uint64_t fg_engine_acquire(fg_engine_t *e, uint64_t dur_ns, uint32_t *ticket);
/* 1 if we still held it, 0 if a waiter took it over (we overran). */
FG_HIDDEN int fg_engine_release(fg_engine_t *e, uint32_t ticket);

#endif
