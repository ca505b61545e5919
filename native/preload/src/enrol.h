/* enrol.c: a process gpushare did not start asks the engine for its job's gate files. */
#ifndef GS_ENROL_H
#define GS_ENROL_H

#include "preload.h"

typedef struct {
  int dir_fd;      /* the gate directory (O_RDONLY): other slots' activities are opened under it */
  int control_fd;  /* the control file, read-only */
  int activity_fd; /* our slot's activity, read-write */
  int park_fd;     /* the job's park file, or -1 (taken by park.c) */
  uint32_t slot, generation;
  int enrolled;
} gs_enrolment_t;

/* 0 in a process of a managed job (GPUSHARE_JOB_ID): it attaches by its environment, or not at all. */
GS_HIDDEN int gs_enrol_wanted(void);
/* Asks the engine once (at most 50 ms); NULL: not enrolled (no engine, refused, kill switch). */
GS_HIDDEN gs_enrolment_t *gs_enrolment(void);
/* The park file's descriptor, once (the caller maps and closes it), or -1. */
GS_HIDDEN int gs_enrolment_take_park_fd(void);

#endif
