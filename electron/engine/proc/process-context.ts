// Where a process runs, from text it leaves in /proc and in container runtimes' local state.
// Pure functions over that text: the reader (context-reader.ts) does the file reads and the caching.
import type { ProcessContext } from '../../../shared/snapshot.js';

export type ContainerRuntime = NonNullable<ProcessContext['container']>['runtime'];

/** What one /proc/PID/cgroup file says. */
export interface CgroupFacts {
  container: { runtime: ContainerRuntime; id: string } | null;
  /** The uid whose systemd user manager (user@UID.service) holds the container: a rootless container's owner. */
  containerOwnerUid: number | null;
  /** The deepest .service or .scope unit, other than a container's own scope (the container says that better). */
  systemdUnit: string | null;
  slurmJobId: string | null;
  /** A Kubernetes pod's uid, where the path names one. */
  kubernetesPod: string | null;
}

const CONTAINER_ID = /^[0-9a-f]{12,64}$/;

/** Container scopes as systemd-driven runtimes name them; conmon (podman's monitor) is not the container. */
const SCOPE_PATTERNS: ReadonlyArray<readonly [RegExp, ContainerRuntime]> = [
  [/^docker-([0-9a-f]{12,64})\.scope$/, 'docker'],
  [/^libpod-(?!conmon-)([0-9a-f]{12,64})\.scope$/, 'podman'],
  [/^cri-containerd-([0-9a-f]{12,64})\.scope$/, 'containerd'],
  [/^nerdctl-([0-9a-f]{12,64})\.scope$/, 'containerd'],
  [/^crio-(?!conmon-)([0-9a-f]{12,64})\.scope$/, 'other'],
];

/**
 * Parse /proc/PID/cgroup in either layout: v2 ("0::/path") or v1 ("N:controllers:/path", one line per hierarchy).
 * The unified path is read first, then v1's name=systemd, then the other controllers (Slurm v1 lives in memory, cpuset…).
 */
export function parseCgroup(text: string): CgroupFacts {
  const facts: CgroupFacts = { container: null, containerOwnerUid: null, systemdUnit: null, slurmJobId: null, kubernetesPod: null };
  for (const path of orderedPaths(text)) {
    const segments = path.split('/').filter(Boolean);
    if (!facts.container) {
      const found = containerIn(segments);
      if (found) {
        facts.container = { runtime: found.runtime, id: found.id };
        facts.containerOwnerUid = userManagerUid(segments.slice(0, found.at));
      }
    }
    facts.systemdUnit ??= unitIn(segments);
    facts.slurmJobId ??= slurmJobIn(segments);
    facts.kubernetesPod ??= podIn(segments);
  }
  // a container's unit is its own scope, and a hybrid host's unified line names the runtime shim's (containerd.service)
  if (facts.container) facts.systemdUnit = null;
  return facts;
}

function orderedPaths(text: string): string[] {
  const unified: string[] = [];
  const systemd: string[] = [];
  const others: string[] = [];
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!match || match[3] === '/' || match[3] === '') continue; // the root cgroup says nothing
    const path = match[3].replace(/ \(deleted\)$/, '');
    if (match[1] === '0' && match[2] === '') unified.push(path);
    else if (match[2] === 'name=systemd') systemd.push(path);
    else others.push(path);
  }
  return [...unified, ...systemd, ...others];
}

function containerIn(segments: string[]): { runtime: ContainerRuntime; id: string; at: number } | null {
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i];
    for (const [pattern, runtime] of SCOPE_PATTERNS) {
      const match = pattern.exec(segment);
      if (match) return { runtime, id: match[1], at: i };
    }
    if (!CONTAINER_ID.test(segment) || i === 0) continue;
    // cgroupfs drivers: /docker/<id>, /libpod_parent/libpod-<id>, /kubepods/<qos>/pod<uid>/<id>
    const parent = segments[i - 1];
    if (parent === 'docker') return { runtime: 'docker', id: segment, at: i };
    // the kubelet's cgroupfs path does not name the runtime; containerd is the default since Kubernetes 1.24
    if (parent.startsWith('pod') && segments.includes('kubepods')) return { runtime: 'containerd', id: segment, at: i };
  }
  for (let i = segments.length - 1; i >= 0; i--) {
    const match = /^libpod-([0-9a-f]{12,64})$/.exec(segments[i]);
    if (match && segments[i - 1] === 'libpod_parent') return { runtime: 'podman', id: match[1], at: i };
  }
  return null;
}

function userManagerUid(segments: string[]): number | null {
  for (const segment of segments) {
    const match = /^user@(\d+)\.service$/.exec(segment);
    if (match) return Number(match[1]);
  }
  return null;
}

function unitIn(segments: string[]): string | null {
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i];
    if (!/\.(service|scope)$/.test(segment)) continue;
    if (SCOPE_PATTERNS.some(([pattern]) => pattern.test(segment)) || /^(libpod|crio)-conmon-/.test(segment)) return null;
    return segment;
  }
  return null;
}

function slurmJobIn(segments: string[]): string | null {
  // v1: /slurm[_node]/uid_U/job_J/step_S/…; v2: /system.slice/[node_]slurmstepd.scope/job_J/step_S/…
  const slurmAt = segments.findIndex((s) => /slurm/.test(s));
  if (slurmAt < 0) return null;
  for (const segment of segments.slice(slurmAt + 1)) {
    const match = /^job_(\d+)$/.exec(segment);
    if (match) return match[1];
  }
  return null;
}

function podIn(segments: string[]): string | null {
  for (const segment of segments) {
    // systemd driver: kubepods-besteffort-pod<uid with _>.slice; cgroupfs: pod<uid>
    const match = /^(?:kubepods-(?:[a-z]+-)?)?pod([0-9a-f_-]{36})(?:\.slice)?$/.exec(segment);
    if (match) return match[1].replace(/_/g, '-');
  }
  return null;
}

/** The variables of a process's environment the functions below read; no other is kept (an environment holds secrets). */
export const ENVIRONMENT_READ: ReadonlySet<string> = new Set(['SLURM_JOB_ID', 'JPY_SESSION_NAME', 'SSH_CONNECTION', 'SSH_TTY', 'container', 'HOSTNAME']);

/** /proc/PID/environ: NUL-separated NAME=value pairs; the first '=' splits them. */
export function parseEnviron(raw: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}

/** "client-ip client-port server-ip server-port" (SSH_CONNECTION) and SSH_TTY → "10.0.0.7:52144 pts/3". */
export function sshSessionOf(env: ReadonlyMap<string, string>): string | null {
  const connection = env.get('SSH_CONNECTION');
  if (!connection) return null;
  const [ip, port] = connection.trim().split(/\s+/);
  if (!ip) return null;
  const tty = env.get('SSH_TTY')?.replace(/^\/dev\//, '');
  return `${port ? `${ip}:${port}` : ip}${tty ? ` ${tty}` : ''}`;
}

/**
 * A Jupyter kernel: its id from the connection file it was started with (`-f …/kernel-ID.json`), and the notebook
 * from JPY_SESSION_NAME, which jupyter_server (2.x) puts in a kernel's environment. Nothing else local maps a kernel
 * to its notebook: the server keeps its sessions in memory and answers them only over its authenticated api/sessions.
 */
export function jupyterKernelOf(argv: readonly string[], env: ReadonlyMap<string, string>): { id: string; notebook: string | null } | null {
  let file: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if ((arg === '-f' || arg === '--f' || arg === '--connection-file') && i + 1 < argv.length) file = argv[i + 1];
    else {
      const inline = /^(?:-f|--f|--connection-file)=(.+)$/.exec(arg);
      if (inline) file = inline[1];
    }
  }
  const match = file === null ? null : /(?:^|\/)kernel-(.+)\.json$/.exec(file);
  if (!match) return null;
  return { id: match[1], notebook: env.get('JPY_SESSION_NAME') || null };
}

/** A container the cgroup path does not show (a nested or unusual runtime): podman and systemd-nspawn say `container=`. */
export function containerFromEnv(env: ReadonlyMap<string, string>): { runtime: ContainerRuntime; id: string } | null {
  const kind = env.get('container');
  const host = env.get('HOSTNAME') ?? '';
  if (!kind || !/^[0-9a-f]{12}$/.test(host)) return null; // the runtimes name the host after the container's short id by default
  return { runtime: kind === 'podman' ? 'podman' : kind === 'docker' ? 'docker' : 'other', id: host };
}

/** Docker's /var/lib/docker/containers/<id>/config.v2.json: "Name" is "/name". */
export function dockerContainerName(configV2: string): string | null {
  const name = (JSON.parse(configV2) as { Name?: unknown }).Name;
  return typeof name === 'string' && name !== '' ? name.replace(/^\//, '') : null;
}

/** Podman's (containers/storage) overlay-containers/containers.json: [{ id, names: [...] }]. */
export function podmanContainerName(containersJson: string, id: string): string | null {
  const list = JSON.parse(containersJson) as Array<{ id?: unknown; names?: unknown }>;
  if (!Array.isArray(list)) return null;
  const entry = list.find((c) => typeof c.id === 'string' && (c.id === id || c.id.startsWith(id)));
  const names = entry?.names;
  return Array.isArray(names) && typeof names[0] === 'string' ? names[0] : null;
}

/** A containerd task's OCI config.json: Kubernetes' CRI annotations (namespace/pod/container), or nerdctl's name. */
export function containerdContainerName(ociConfig: string): string | null {
  const annotations = (JSON.parse(ociConfig) as { annotations?: Record<string, unknown> }).annotations ?? {};
  const text = (key: string): string | null => (typeof annotations[key] === 'string' && annotations[key] !== '' ? (annotations[key] as string) : null);
  const container = text('io.kubernetes.cri.container-name');
  if (container) {
    const pod = text('io.kubernetes.cri.sandbox-name');
    const namespace = text('io.kubernetes.cri.sandbox-namespace');
    return [namespace, pod, container].filter(Boolean).join('/');
  }
  return text('nerdctl/name');
}
