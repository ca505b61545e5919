/* Prints the gate file layout as JSON, so the engine's TypeScript mirror
 * (launch-gate-layout.ts) is checked against the C header by a test. */
#include <stddef.h>
#include <stdio.h>

#include "../../include/gate_abi.h"

#define F(type, field) printf("%s\"%s.%s\":%zu", first ? "" : ",", #type, #field, offsetof(type, field)), first = 0

int main(void) {
  int first = 1;
  printf("{\"constants\":{\"magic\":\"%llu\",\"version\":%u,\"maxSlots\":%u,\"maxGpus\":%u,\"maxDomains\":%u,"
         "\"maxProcs\":%u,\"domainOffset\":%u,\"domainSize\":%u,\"slotOffset\":%u,\"slotSize\":%u,\"procOffset\":%u,"
         "\"procSize\":%u,\"fileSize\":%u,\"noQuota\":\"%llu\",\"procReclaiming\":%d},\"offsets\":{",
         (unsigned long long)GATE_MAGIC, GATE_VERSION, GATE_MAX_SLOTS, GATE_MAX_GPUS, GATE_MAX_DOMAINS, GATE_MAX_PROCS,
         GATE_DOMAIN_OFFSET, GATE_DOMAIN_SIZE, GATE_SLOT_OFFSET, GATE_SLOT_SIZE, GATE_PROC_OFFSET, GATE_PROC_SIZE,
         (unsigned)GATE_FILE_SIZE, (unsigned long long)GATE_NO_QUOTA, GATE_PROC_RECLAIMING);
  F(gate_header_t, magic); F(gate_header_t, version); F(gate_header_t, max_slots); F(gate_header_t, max_domains);
  F(gate_header_t, engine_pid); F(gate_header_t, heartbeat_ns); F(gate_header_t, active_window_ns);
  F(gate_header_t, outstanding_max_ns); F(gate_header_t, be_sync_window_ns); F(gate_header_t, engine_gone_ns);
  F(gate_header_t, state); F(gate_header_t, file_size);
  F(gate_domain_t, members);
  F(gate_slot_t, state); F(gate_slot_t, generation); F(gate_slot_t, pid); F(gate_slot_t, domain);
  F(gate_slot_t, priority); F(gate_slot_t, paused); F(gate_slot_t, config_seq); F(gate_slot_t, gpu);
  F(gate_slot_t, quota_bytes);
  F(gate_slot_t, in_launch); F(gate_slot_t, attached_pid); F(gate_slot_t, last_launch_ns); F(gate_slot_t, launches);
  F(gate_slot_t, synced_launches); F(gate_slot_t, used_bytes); F(gate_slot_t, gated_ns); F(gate_slot_t, paused_ns);
  F(gate_slot_t, attach_count); F(gate_slot_t, fail_open_count); F(gate_slot_t, oom_count);
  F(gate_slot_t, reclaimed_count); F(gate_slot_t, untracked_count); F(gate_slot_t, stuck_waits); F(gate_slot_t, procs);
  F(gate_proc_t, pid); F(gate_proc_t, in_launch); F(gate_proc_t, used_bytes); F(gate_proc_t, launches);
  F(gate_proc_t, synced_launches); F(gate_proc_t, capturing);
  printf("}}\n");
  return 0;
}
