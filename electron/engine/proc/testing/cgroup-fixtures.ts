// /proc/PID/cgroup files as each layout writes them, for the parser's tests.
// Transcribed from the runtimes' documented layouts and public recordings (kernel OOM reports, bug threads);
// the v1 files keep every hierarchy line, as a hybrid host prints them, so the parser must pick the right one.

export const DOCKER_ID = '47335b04ebb4aefdc353dda62ddd38e5e1e00fc1372f0c8d0138417f0ccb9e6c';
export const PODMAN_ID = '3f084b4c7b789c1a0f174da3fcd339e31125d3096b3ff46a0bef4fad71d09362';
export const CONTAINERD_ID = '8e2a0f3d2c4b7d51b4f6b4b0bbbd1e53f6a8a1cbf3f4b2c8d9d1b9f6d0d7e4a1';
export const POD_UID = '0b8c4e3a-6f1d-4a52-9a7e-5c2d1e9b3f40';

/** Docker, systemd cgroup driver, cgroup v2 (Debian 12, Ubuntu 22.04+). */
export const dockerV2Systemd = `0::/system.slice/docker-${DOCKER_ID}.scope\n`;

/** Docker, cgroupfs driver, cgroup v1 (hybrid host: name=systemd keeps the daemon's unit for the shim's children). */
export const dockerV1Cgroupfs = [
  `12:hugetlb:/docker/${DOCKER_ID}`,
  `11:memory:/docker/${DOCKER_ID}`,
  `10:devices:/docker/${DOCKER_ID}`,
  `9:cpu,cpuacct:/docker/${DOCKER_ID}`,
  `8:pids:/docker/${DOCKER_ID}`,
  `7:net_cls,net_prio:/docker/${DOCKER_ID}`,
  `6:cpuset:/docker/${DOCKER_ID}`,
  `5:freezer:/docker/${DOCKER_ID}`,
  `4:blkio:/docker/${DOCKER_ID}`,
  `3:perf_event:/docker/${DOCKER_ID}`,
  `2:rdma:/`,
  `1:name=systemd:/docker/${DOCKER_ID}`,
  `0::/system.slice/containerd.service`,
  '',
].join('\n');

/** Podman as root, cgroup v2: the container's processes sit in the scope's "container" child (podman ≥ 4 with --cgroupns). */
export const podmanRootfulV2 = `0::/machine.slice/libpod-${PODMAN_ID}.scope/container\n`;

/** Podman's monitor beside it: conmon is no container process. */
export const podmanConmonV2 = `0::/machine.slice/libpod-conmon-${PODMAN_ID}.scope\n`;

/** Rootless podman, cgroup v2: under the user's own systemd manager (uid 1000). */
export const podmanRootlessV2 = `0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-${PODMAN_ID}.scope/container\n`;

/** A system service (cgroup v2). */
export const systemServiceV2 = '0::/system.slice/jupyterhub.service\n';

/** A user's login session (ssh or a console login), cgroup v2. */
export const userSessionV2 = '0::/user.slice/user-1000.slice/session-7.scope\n';

/** A service of the user's own manager (systemctl --user), cgroup v2. */
export const userServiceV2 = '0::/user.slice/user-1000.slice/user@1000.service/app.slice/trainer.service\n';

/** A login session on a v1 hybrid host: only name=systemd and the unified line know the unit. */
export const userSessionV1 = [
  '11:memory:/user.slice/user-1000.slice/session-3.scope',
  '10:devices:/user.slice',
  '9:pids:/user.slice/user-1000.slice/session-3.scope',
  '8:cpu,cpuacct:/user.slice',
  '7:freezer:/',
  '6:cpuset:/',
  '5:blkio:/user.slice',
  '4:net_cls,net_prio:/',
  '3:perf_event:/',
  '2:hugetlb:/',
  '1:name=systemd:/user.slice/user-1000.slice/session-3.scope',
  '0::/user.slice/user-1000.slice/session-3.scope',
  '',
].join('\n');

/** Slurm, cgroup v1 (task/cgroup plugin): the job lives in the controllers slurmd manages, not in name=systemd. */
export const slurmV1 = [
  '11:devices:/slurm/uid_1000/job_123456/step_0/task_0',
  '10:memory:/slurm/uid_1000/job_123456/step_0/task_0',
  '9:pids:/system.slice/slurmd.service',
  '8:cpu,cpuacct:/system.slice/slurmd.service',
  '7:freezer:/slurm/uid_1000/job_123456/step_0',
  '6:cpuset:/slurm/uid_1000/job_123456/step_0',
  '5:blkio:/system.slice/slurmd.service',
  '4:net_cls,net_prio:/',
  '3:perf_event:/',
  '2:hugetlb:/',
  '1:name=systemd:/system.slice/slurmd.service',
  '0::/system.slice/slurmd.service',
  '',
].join('\n');

/** Slurm, cgroup v2 (cgroup/v2 plugin, 22.05+): slurmstepd's scope holds every job. */
export const slurmV2 = '0::/system.slice/slurmstepd.scope/job_98765/step_batch/user/task_0\n';

/** Kubernetes with containerd, systemd driver, cgroup v2 (a best-effort pod). */
export const k8sContainerdV2 =
  `0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${POD_UID.replace(/-/g, '_')}.slice/cri-containerd-${CONTAINERD_ID}.scope\n`;

/** Kubernetes, cgroupfs driver, cgroup v1 (a burstable pod). */
export const k8sCgroupfsV1 = [
  `11:memory:/kubepods/burstable/pod${POD_UID}/${CONTAINERD_ID}`,
  `10:devices:/kubepods/burstable/pod${POD_UID}/${CONTAINERD_ID}`,
  `4:cpu,cpuacct:/kubepods/burstable/pod${POD_UID}/${CONTAINERD_ID}`,
  `1:name=systemd:/kubepods/burstable/pod${POD_UID}/${CONTAINERD_ID}`,
  '0::/',
  '',
].join('\n');

/** A process outside any of it (this machine's own PID 1 on a container host: every path the root). */
export const rootOnlyV1 = ['9:name=systemd:/', '8:pids:/', '4:memory:/', '0::/', ''].join('\n');
