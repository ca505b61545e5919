// Reads where each GPU process runs (/proc/PID/cgroup, environ, cmdline; the container runtimes' local state).
// Read once per process (pid + start time, so a reused pid is read afresh) and kept while it stays on a GPU.
// Every read has a bound (a process's environment may be megabytes; a rootless runtime's state lies in its user's
// home), and so has every text kept.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessContext } from '../../../shared/snapshot.js';
import { lookupAccount } from '../accounts.js';
import { readEnvironVariables, readHead, readSmallText, readStateFile } from './bounded-read.js';
import { cutOptionalText, cutText } from './text-bounds.js';
import {
  containerdContainerName,
  containerFromEnv,
  dockerContainerName,
  ENVIRONMENT_READ,
  jupyterKernelOf,
  parseCgroup,
  podmanContainerName,
  sshSessionOf,
  type ContainerRuntime,
} from './process-context.js';

export interface ContextReaderOptions {
  /** Where /proc is (tests: a fixture directory). */
  procRoot?: string;
  /** The root under which /var/lib/docker, /var/lib/containers, /run/containerd and /etc/passwd are found. */
  hostRoot?: string;
}

/** Container names change rarely and their lookups read JSON files: kept per id, bounded. */
const MAX_NAMES_KEPT = 512;
/** (uid_t)-1: a process no login started (a service, the kernel's own). */
const UNSET_LOGIN_UID = 4294967295;
/** /proc/PID/cgroup: a line per hierarchy (a dozen on v1), each a path of at most PATH_MAX. */
const CGROUP_MAX_BYTES = 64 * 1024;
/** A variable's value is kept to this many bytes: what is shown of it is a line. */
const ENV_VALUE_MAX_BYTES = 1024;
/** A runtime's state file (a container's config; a rootless user's list of containers): larger ones are not read. */
const STATE_FILE_MAX_BYTES = 2 * 1024 * 1024;

export class ProcessContextReader {
  private readonly known = new Map<number, { startedAt: number | null; context: ProcessContext | null }>();
  private readonly names = new Map<string, string | null>();
  private readonly procRoot: string;
  private readonly hostRoot: string;

  constructor(options: ContextReaderOptions = {}) {
    this.procRoot = options.procRoot ?? '/proc';
    this.hostRoot = options.hostRoot ?? '/';
  }

  /** The context of a process, read the first time this pid with this start time is seen; null where /proc shows nothing. Never throws. */
  lookup(pid: number, startedAt: number | null, argv: readonly string[]): ProcessContext | null {
    const kept = this.known.get(pid);
    if (kept && kept.startedAt === startedAt) return kept.context;
    const context = this.read(pid, argv);
    this.known.set(pid, { startedAt, context });
    return context;
  }

  /** Forget processes no longer on a GPU. */
  retainOnly(pids: ReadonlySet<number>): void {
    for (const pid of this.known.keys()) if (!pids.has(pid)) this.known.delete(pid);
  }

  get size(): number {
    return this.known.size;
  }

  private read(pid: number, argv: readonly string[]): ProcessContext | null {
    const cgroup = readHead(join(this.procRoot, String(pid), 'cgroup'), CGROUP_MAX_BYTES);
    if (cgroup === null) return null; // gone, or in another pid namespace
    const cgroupText = cgroup.head.toString('utf8');
    // a file past the bound is read to its last whole line
    const facts = parseCgroup(cgroup.bytes > cgroup.head.length ? cgroupText.slice(0, cgroupText.lastIndexOf('\n') + 1) : cgroupText);
    // another user's environ is readable only by root (and the owner): the rest is still known from the cgroup.
    // Only the variables named in ENVIRONMENT_READ are kept: an environment holds secrets
    const env = readEnvironVariables(join(this.procRoot, String(pid), 'environ'), ENVIRONMENT_READ, ENV_VALUE_MAX_BYTES) ?? new Map<string, string>();
    const container = facts.container ?? containerFromEnv(env);
    // a rootless container's storage is its owner's; a rootful one's is root's whoever ran it
    const rootlessUid = facts.container ? facts.containerOwnerUid : null;
    const startedByUid = facts.container ? (rootlessUid ?? this.podmanLoginUid(pid, facts.container.runtime)) : null;
    const kernel = jupyterKernelOf(argv, env);
    return {
      container: container ? { ...container, id: cutText(container.id), name: this.containerName(container.runtime, container.id, rootlessUid, facts.kubernetesPod) } : null,
      // rootless podman (or docker): the user manager it runs under; rootful podman: the login uid; rootful docker keeps no record of who ran it
      containerUser: startedByUid === null ? null : cutText(lookupAccount(startedByUid, this.host('etc/passwd')).name),
      systemdUnit: cutOptionalText(facts.systemdUnit),
      slurmJobId: cutOptionalText(facts.slurmJobId ?? env.get('SLURM_JOB_ID') ?? null),
      jupyterKernel: kernel && { id: cutText(kernel.id), notebook: cutOptionalText(kernel.notebook) },
      sshSession: cutOptionalText(sshSessionOf(env)),
    };
  }

  /**
   * Podman forks its containers from the command that ran them, so they keep that login's audit uid (sudo podman run:
   * the user's). Docker's and containerd's are their daemon's children: a login uid there names whoever started the daemon.
   */
  private podmanLoginUid(pid: number, runtime: ContainerRuntime): number | null {
    if (runtime !== 'podman') return null;
    const text = readSmallText(join(this.procRoot, String(pid), 'loginuid'), 32)?.trim() ?? '';
    if (!/^\d+$/.test(text) || Number(text) === UNSET_LOGIN_UID) return null;
    return Number(text);
  }

  private containerName(runtime: ContainerRuntime, id: string, rootlessUid: number | null, pod: string | null): string | null {
    const key = `${runtime}:${id}`;
    if (this.names.has(key)) return this.names.get(key) ?? null;
    let name: string | null = null;
    try {
      name = cutOptionalText(this.nameFromState(runtime, id, rootlessUid) ?? (pod === null ? null : this.podName(pod)));
    } catch {
      name = null; // unreadable or malformed runtime state: shown by id
    }
    if (this.names.size >= MAX_NAMES_KEPT) this.names.clear();
    this.names.set(key, name);
    return name;
  }

  private nameFromState(runtime: ContainerRuntime, id: string, rootlessUid: number | null): string | null {
    if (runtime === 'docker') {
      const config = readStateFile(this.host(`var/lib/docker/containers/${id}/config.v2.json`), STATE_FILE_MAX_BYTES);
      return config === null ? null : dockerContainerName(config);
    }
    if (runtime === 'podman') {
      const home = rootlessUid === null ? null : lookupAccount(rootlessUid, this.host('etc/passwd')).home;
      const storage = home === null ? this.host('var/lib/containers/storage') : join(this.hostRoot, home, '.local/share/containers/storage');
      const list = readStateFile(join(storage, 'overlay-containers/containers.json'), STATE_FILE_MAX_BYTES);
      return list === null ? null : podmanContainerName(list, id);
    }
    if (runtime === 'containerd') {
      const tasks = this.host('run/containerd/io.containerd.runtime.v2.task');
      for (const namespace of listDir(tasks)) {
        const config = readStateFile(join(tasks, namespace, id, 'config.json'), STATE_FILE_MAX_BYTES);
        if (config !== null) return containerdContainerName(config);
      }
    }
    return null;
  }

  /** The kubelet names each pod's log directory NAMESPACE_POD_UID (neither name may hold '_'): the pod where the runtime's state is out of reach. */
  private podName(uid: string): string | null {
    const entry = listDir(this.host('var/log/pods')).find((name) => name.endsWith(`_${uid}`));
    const [namespace, pod] = entry?.split('_') ?? [];
    return namespace && pod ? `pod ${namespace}/${pod}` : null;
  }

  private host(path: string): string {
    return join(this.hostRoot, path);
  }
}

function listDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
