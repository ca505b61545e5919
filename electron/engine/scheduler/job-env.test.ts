// A job's environment as submitted: the caller's, the personal engine's, or a login-like one for
// the daemon; gpushare's own variables never come from any of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobEnvironment, LOGIN_PATH } from './job-env.js';
import type { Account } from '../accounts.js';

const alice: Account = { uid: 1000, gid: 1000, name: 'alice', home: '/home/alice', shell: '/bin/zsh' };
const ENGINE_SET = ['LD_PRELOAD=/x.so', 'GPUSHARE_JOB_ID=j9', 'GPUSHARE_GATE=/g', 'GPUSHARE_MEM_QUOTA=1', 'GPUSHARE_FAKEGPU_STATE=/s', 'CUDA_VISIBLE_DEVICES=3', 'CUDA_DEVICE_ORDER=FASTEST_FIRST', 'CUDA_MPS_PIPE_DIRECTORY=/p', 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100'];

test("what the caller sent is the job's, less every variable the engine sets", () => {
  const env = jobEnvironment({ sent: ['PATH=/opt/conda/bin:/usr/bin', 'HOME=/home/alice', 'A=1=2', ...ENGINE_SET, 'CUDA_HOME=/usr/local/cuda'], account: alice, engineEnv: {}, engineIsTheUsers: false });
  assert.deepEqual(env, { PATH: '/opt/conda/bin:/usr/bin', HOME: '/home/alice', A: '1=2', CUDA_HOME: '/usr/local/cuda' });
});

test("with nothing sent, the daemon's job gets a login-like environment for its user, never the daemon's own", () => {
  const daemon = { PATH: '/usr/sbin:/usr/bin', NOTIFY_SOCKET: '/run/systemd/notify', INVOCATION_ID: 'abc', LANG: 'de_DE.UTF-8', GPUSHARE_SOCKET: '/run/gpushare/engine.sock' };
  assert.deepEqual(jobEnvironment({ sent: undefined, account: alice, engineEnv: daemon, engineIsTheUsers: false }), {
    HOME: '/home/alice',
    USER: 'alice',
    LOGNAME: 'alice',
    SHELL: '/bin/zsh',
    PATH: LOGIN_PATH,
    LANG: 'de_DE.UTF-8',
  });
  const bare = jobEnvironment({ sent: undefined, account: { uid: 4242, gid: 4242, name: '4242', home: null }, engineEnv: {}, engineIsTheUsers: false });
  assert.deepEqual(bare, { HOME: '/', USER: '4242', LOGNAME: '4242', SHELL: '/bin/sh', PATH: LOGIN_PATH });
});

test("with nothing sent, a personal engine's job gets the engine's environment (its user's), less the engine's variables", () => {
  const engineEnv = { PATH: '/home/alice/.local/bin:/usr/bin', EDITOR: 'vim', UNSET: undefined, ...Object.fromEntries(ENGINE_SET.map((e) => e.split('='))) };
  assert.deepEqual(jobEnvironment({ sent: undefined, account: alice, engineEnv, engineIsTheUsers: true }), { PATH: '/home/alice/.local/bin:/usr/bin', EDITOR: 'vim' });
});

test("a job from another box (loginEnv) starts from this box's login environment for its user, with only what was sent on top, less the engine's variables", () => {
  const sent = ['LANG=C.UTF-8', 'TERM=xterm-256color', 'WANDB_PROJECT=p1', 'HOME=/home/alice/elsewhere', ...ENGINE_SET, 'LD_PRELOAD=/home/alice/evil.so'];
  const daemon = { PATH: '/usr/sbin:/usr/bin', LANG: 'de_DE.UTF-8', NOTIFY_SOCKET: '/run/systemd/notify' };
  assert.deepEqual(jobEnvironment({ sent, loginEnv: true, account: alice, engineEnv: daemon, engineIsTheUsers: false }), {
    HOME: '/home/alice/elsewhere', // named by the person: theirs to choose, as with ssh's SendEnv
    USER: 'alice',
    LOGNAME: 'alice',
    SHELL: '/bin/zsh',
    PATH: LOGIN_PATH,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    WANDB_PROJECT: 'p1',
  });
  // nothing sent: the login environment alone, with the box's LANG; a personal engine's own environment is not used either
  assert.deepEqual(jobEnvironment({ sent: [], loginEnv: true, account: alice, engineEnv: { ...daemon, EDITOR: 'vim' }, engineIsTheUsers: true }), { HOME: '/home/alice', USER: 'alice', LOGNAME: 'alice', SHELL: '/bin/zsh', PATH: LOGIN_PATH, LANG: 'de_DE.UTF-8' });
});

test("a login-like environment carries the user's runtime directory where the box has one (as pam_systemd gives an ssh login); what the person named wins", () => {
  const daemon = { PATH: '/usr/sbin:/usr/bin' };
  const runtimeDir = '/run/user/1000';
  assert.equal(jobEnvironment({ sent: ['TERM=xterm'], loginEnv: true, account: alice, engineEnv: daemon, engineIsTheUsers: false, runtimeDir }).XDG_RUNTIME_DIR, runtimeDir);
  assert.equal(jobEnvironment({ sent: undefined, account: alice, engineEnv: daemon, engineIsTheUsers: false, runtimeDir }).XDG_RUNTIME_DIR, runtimeDir, 'the daemon\'s job with nothing sent (the browser console)');
  assert.equal('XDG_RUNTIME_DIR' in jobEnvironment({ sent: [], loginEnv: true, account: alice, engineEnv: daemon, engineIsTheUsers: false, runtimeDir: null }), false, 'none on the box: unset');
  assert.equal(jobEnvironment({ sent: ['XDG_RUNTIME_DIR=/tmp/mine'], loginEnv: true, account: alice, engineEnv: daemon, engineIsTheUsers: false, runtimeDir }).XDG_RUNTIME_DIR, '/tmp/mine', 'named with --env');
  assert.equal('XDG_RUNTIME_DIR' in jobEnvironment({ sent: ['A=1'], account: alice, engineEnv: daemon, engineIsTheUsers: false, runtimeDir }), false, 'a job run on this box keeps the environment its caller sent');
});
