/* Shared by gate.c (attach, activity, the launch protocol) and gate_procs.c
 * (the job's process table, used bytes, synchronised launches). */
#ifndef GS_GATE_INTERNAL_H
#define GS_GATE_INTERNAL_H

#include "preload.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define SUB(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define ADD_SC(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define SUB_SC(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_SEQ_CST)
#define CAS(p, expected, desired) \
  __atomic_compare_exchange_n((p), (expected), (desired), 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

typedef struct {
  gate_header_t *hdr;
  gate_domain_t *domains;
  gate_slot_t *slots;
  gate_slot_t *me;
  uint32_t index, generation;
} gs_gate_map_t;
extern GS_HIDDEN gs_gate_map_t gs_g;

/* gate.c: our slot, or NULL (not gated, or released). */
GS_HIDDEN gate_slot_t *gs_gate_me(void);

/* gate_procs.c */
extern GS_HIDDEN uint32_t gs_capturing_streams; /* streams of this process capturing now */
GS_HIDDEN int32_t gs_self_pid(void); /* this process, kept current across fork */
GS_HIDDEN void gs_self_pid_reset(void);
/* This process's entry in our slot's table, claimed on first use (a private
 * stand-in when the table is full). Only while gs_gate_me() is not NULL. */
GS_HIDDEN gate_proc_t *gs_proc(gate_slot_t *me);
GS_HIDDEN int gs_pid_gone(int32_t pid);
/* Processes of our job whose pid is gone: their share given back. Returns how many. */
GS_HIDDEN unsigned gs_reclaim_gone(gate_slot_t *me);
/* `launches` of this process at `snapshot` are complete: count them as synced. */
GS_HIDDEN void gs_proc_synced(gate_slot_t *me, gate_proc_t *p, uint64_t snapshot);
/* Sum of in_launch over the live processes of slot s, plus what untracked ones hold. */
GS_HIDDEN uint32_t gs_live_in_launch(gate_slot_t *s);

#endif
