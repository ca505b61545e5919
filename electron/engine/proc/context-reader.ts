// Reads where each GPU process runs (/proc/PID/cgroup, environ, cmdline; the container runtimes' local state).
// Read once per process (pid + start time, so a reused pid is read afresh) and kept while it stays on a GPU.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessContext } from '../../../shared/snapshot.js';
import { lookupAccount } from '../accounts.js';
import {
  containerdContainerName,
  containerFromEnv,
  dockerContainerName,
  jupyterKernelOf,
  parseCgroup,
  parseEnviron,
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
    const cgroupText = readText(join(this.procRoot, String(pid), 'cgroup'));
    if (cgroupText === null) return null; // gone, or in another pid namespace
    const facts = parseCgroup(cgroupText);
    // another user's environ is readable only by root (and the owner): the rest is still known from the cgroup.
    // Only the variables named below are kept: an environment holds secrets
    const environ = readText(join(this.procRoot, String(pid), 'environ'));
    const env = environ === null ? new Map<string, string>() : parseEnviron(environ);
    const container = facts.container ?? containerFromEnv(env);
    // a rootless container's storage is its owner's; a rootful one's is root's whoever ran it
    const rootlessUid = facts.container ? facts.containerOwnerUid : null;
    const startedByUid = facts.container ? (rootlessUid ?? this.podmanLoginUid(pid, facts.container.runtime)) : null;
    return {
      container: container ? { ...container, name: this.containerName(container.runtime, container.id, rootlessUid, facts.kubernetesPod) } : null,
      // rootless podman (or docker): the user manager it runs under; rootful podman: the login uid; rootful docker keeps no record of who ran it
      containerUser: startedByUid === null ? null : lookupAccount(startedByUid, this.host('etc/passwd')).name,
      systemdUnit: facts.systemdUnit,
      slurmJobId: facts.slurmJobId ?? env.get('SLURM_JOB_ID') ?? null,
      jupyterKernel: jupyterKernelOf(argv, env),
      sshSession: sshSessionOf(env),
    };
  }

  /**
   * Podman forks its containers from the command that ran them, so they keep that login's audit uid (sudo podman run:
   * the user's). Docker's and containerd's are their daemon's children: a login uid there names whoever started the daemon.
   */
  private podmanLoginUid(pid: number, runtime: ContainerRuntime): number | null {
    if (runtime !== 'podman') return null;
    const text = readText(join(this.procRoot, String(pid), 'loginuid'))?.trim() ?? '';
    if (!/^\d+$/.test(text) || Number(text) === UNSET_LOGIN_UID) return null;
    return Number(text);
  }

  private containerName(runtime: ContainerRuntime, id: string, rootlessUid: number | null, pod: string | null): string | null {
    const key = `${runtime}:${id}`;
    if (this.names.has(key)) return this.names.get(key) ?? null;
    let name: string | null = null;
    try {
      name = this.nameFromState(runtime, id, rootlessUid) ?? (pod === null ? null : this.podName(pod));
    } catch {
      name = null; // unreadable or malformed runtime state: shown by id
    }
    if (this.names.size >= MAX_NAMES_KEPT) this.names.clear();
    this.names.set(key, name);
    return name;
  }

  private nameFromState(runtime: ContainerRuntime, id: string, rootlessUid: number | null): string | null {
    if (runtime === 'docker') {
      const config = readText(this.host(`var/lib/docker/containers/${id}/config.v2.json`));
      return config === null ? null : dockerContainerName(config);
    }
    if (runtime === 'podman') {
      const home = rootlessUid === null ? null : lookupAccount(rootlessUid, this.host('etc/passwd')).home;
      const storage = home === null ? this.host('var/lib/containers/storage') : join(this.hostRoot, home, '.local/share/containers/storage');
      const list = readText(join(storage, 'overlay-containers/containers.json'));
      return list === null ? null : podmanContainerName(list, id);
    }
    if (runtime === 'containerd') {
      const tasks = this.host('run/containerd/io.containerd.runtime.v2.task');
      for (const namespace of listDir(tasks)) {
        const config = readText(join(tasks, namespace, id, 'config.json'));
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

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function listDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
