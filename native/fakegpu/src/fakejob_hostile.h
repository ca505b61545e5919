/* fakejob's hostile profile (fakejob_hostile.c): a job that attacks the launch gate. */
#ifndef FAKEJOB_HOSTILE_H
#define FAKEJOB_HOSTILE_H

#include <signal.h>

typedef struct {
  const char *gate;        /* the gate directory (GPUSHARE_GATE) */
  unsigned slot;           /* our slot (GPUSHARE_GATE_SLOT) */
  unsigned in_launch;      /* what to claim as in_launch for ever (1: stuck mid-launch) */
  double truncate_after_s; /* truncate our activity file after this long; < 0: only on SIGUSR1 */
  double duration_s;       /* 0: until SIGTERM */
} fakejob_hostile_opts_t;

typedef void (*fakejob_emit_fn)(const char *fmt, ...);

/* Runs the attack until *stop (or the duration); *advance (SIGUSR1) truncates now. 0, or an exit code. */
int fakejob_hostile(const fakejob_hostile_opts_t *o, fakejob_emit_fn emit, volatile sig_atomic_t *stop,
                    volatile sig_atomic_t *advance);

#endif
