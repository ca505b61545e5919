/* Prints the gate files' layout as JSON, so the engine's TypeScript mirror
 * (launch-gate-layout.ts) is checked against the C header by a test. */
#include <stddef.h>
#include <stdio.h>

#include "../../include/gate_abi.h"

#define F(type, field) printf("%s\"%s.%s\":%zu", first ? "" : ",", #type, #field, offsetof(type, field)), first = 0

int main(void) {
  int first = 1;
  printf("{\"constants\":{\"magic\":\"%llu\",\"activityMagic\":\"%llu\",\"version\":%u,\"maxSlots\":%u,\"maxGpus\":%u,"
         "\"maxDomains\":%u,\"maxProcs\":%u,\"domainOffset\":%u,\"domainSize\":%u,\"slotOffset\":%u,\"slotSize\":%u,\"slotDomainsOffset\":%u,\"slotDomainsSize\":%u,"
         "\"controlSize\":%u,\"activitySize\":%u,\"procOffset\":%u,\"procSize\":%u,\"stuckOffset\":%u,\"gapOffset\":%u,\"gapBuckets\":%u,\"noQuota\":\"%llu\","
         "\"procReclaiming\":%d,\"holdMaxNs\":\"%llu\",\"controlFile\":\"%s\",\"activityPrefix\":\"%s\"},"
         "\"priorities\":{\"count\":%u,\"high\":%d,\"normal\":%d,\"best-effort\":%d},\"offsets\":{",
         (unsigned long long)GATE_MAGIC, (unsigned long long)GATE_ACTIVITY_MAGIC, GATE_VERSION, GATE_MAX_SLOTS,
         GATE_MAX_GPUS, GATE_MAX_DOMAINS, GATE_MAX_PROCS, GATE_DOMAIN_OFFSET, GATE_DOMAIN_SIZE, GATE_SLOT_OFFSET,
         GATE_SLOT_SIZE, GATE_SLOT_DOMAINS_OFFSET, GATE_SLOT_DOMAINS_SIZE, (unsigned)GATE_CONTROL_SIZE, GATE_ACTIVITY_SIZE, GATE_PROC_OFFSET, GATE_PROC_SIZE,
         GATE_STUCK_OFFSET, GATE_GAP_OFFSET, GATE_GAP_BUCKETS, (unsigned long long)GATE_NO_QUOTA, GATE_PROC_RECLAIMING, (unsigned long long)GATE_HOLD_MAX_NS,
         GATE_CONTROL_FILE, GATE_ACTIVITY_PREFIX, GATE_PRIORITIES, GATE_PRIORITY_HIGH, GATE_PRIORITY_NORMAL, GATE_PRIORITY_BEST_EFFORT);
  F(gate_header_t, magic); F(gate_header_t, version); F(gate_header_t, max_slots); F(gate_header_t, max_domains);
  F(gate_header_t, engine_pid); F(gate_header_t, heartbeat_ns); F(gate_header_t, active_window_ns);
  F(gate_header_t, outstanding_max_ns); F(gate_header_t, be_sync_window_ns); F(gate_header_t, engine_gone_ns);
  F(gate_header_t, state); F(gate_header_t, file_size); F(gate_header_t, window_policy);
  F(gate_domain_t, members); F(gate_domain_t, stuck);
  F(gate_slot_t, state); F(gate_slot_t, generation); F(gate_slot_t, pid); F(gate_slot_t, domain);
  F(gate_slot_t, priority); F(gate_slot_t, paused); F(gate_slot_t, config_seq); F(gate_slot_t, gpu);
  F(gate_slot_t, quota_bytes); F(gate_slot_t, activity_ino); F(gate_slot_t, owner_uid);
  F(gate_slot_t, reserved); F(gate_slot_t, unconfirmed);
  F(gate_activity_t, magic); F(gate_activity_t, slot); F(gate_activity_t, generation);
  F(gate_activity_t, in_launch); F(gate_activity_t, attached_pid); F(gate_activity_t, last_launch_ns);
  F(gate_activity_t, launches); F(gate_activity_t, synced_launches); F(gate_activity_t, used_bytes);
  F(gate_activity_t, gated_ns); F(gate_activity_t, paused_ns); F(gate_activity_t, attach_count);
  F(gate_activity_t, fail_open_count); F(gate_activity_t, oom_count); F(gate_activity_t, reclaimed_count);
  F(gate_activity_t, untracked_count); F(gate_activity_t, stuck_waits); F(gate_activity_t, held_ns);
  F(gate_activity_t, truncated_count); F(gate_activity_t, gap_samples); F(gate_activity_t, idle_since_ns);
  F(gate_activity_t, hold_ns); F(gate_activity_t, kernel_ns); F(gate_activity_t, procs);
  F(gate_activity_t, stuck_gen); F(gate_activity_t, gap_hist);
  F(gate_proc_t, pid); F(gate_proc_t, in_launch); F(gate_proc_t, used_bytes); F(gate_proc_t, launches);
  F(gate_proc_t, synced_launches); F(gate_proc_t, capturing);
  printf("}}\n");
  return 0;
}
