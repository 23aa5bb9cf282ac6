'use strict';
/**
 * n8n in queue mode on one machine, for test/e2e-queue and the queue benchmark:
 * Debian's redis-server and PostgreSQL (initdb'd into a scratch folder, both on loopback),
 * an n8n main (`n8n start`, EXECUTIONS_MODE=queue) and n8n workers (`n8n worker`), each with
 * its own user folder into which the packed package is installed the way users install a
 * community package (`<user folder>/.n8n/nodes`), as on separate machines.
 *
 * Reuses scripts/e2e/n8n.js (N8nInstance, installPackageInto, ...). Every process started here
 * runs in its own process group and is registered in scripts/e2e/processes.js: `stopAll()`,
 * `stopEverything()` and a process 'exit' hook end them all (SIGTERM, then SIGKILL).
 */
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const e2e = require('./n8n');
const { killGroup, spawnOwned, stopProc, stopEverything } = require('./processes');

const { sleep, log } = e2e;
const QUEUE_DIR = path.join(e2e.CACHE, 'queue');
const ENCRYPTION_KEY = 'e2e-queue-document-workflow-encryption-key';

function readLog(proc) {
	return proc && fs.existsSync(proc.logFile) ? fs.readFileSync(proc.logFile, 'utf8') : '';
}

function tail(text, lines = 40) {
	return text.split('\n').slice(-lines).join('\n');
}

async function waitUntil(fn, { timeoutMs, intervalMs = 300, what, proc }) {
	const t0 = Date.now();
	for (;;) {
		if (proc && proc.exitInfo)
			throw new Error(
				`${proc.name} exited (${JSON.stringify(proc.exitInfo)}) while waiting for ${what}:\n${tail(readLog(proc))}`,
			);
		const v = await fn().catch(() => false);
		if (v) return v;
		if (Date.now() - t0 > timeoutMs)
			throw new Error(
				`timed out after ${timeoutMs} ms waiting for ${what}${proc ? `:\n${tail(readLog(proc))}` : ''}`,
			);
		await sleep(intervalMs);
	}
}

// ---------- binaries ----------

function which(cmd) {
	const r = spawnSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
	return r.status === 0 ? r.stdout.trim() : null;
}

/** Debian's PostgreSQL binaries (/usr/lib/postgresql/<major>/bin, newest major). */
function postgresBinDir() {
	const base = '/usr/lib/postgresql';
	if (fs.existsSync(base)) {
		const majors = fs
			.readdirSync(base)
			.filter((d) => fs.existsSync(path.join(base, d, 'bin', 'postgres')))
			.sort((a, b) => Number(b) - Number(a));
		if (majors.length) return path.join(base, majors[0], 'bin');
	}
	const pg = which('postgres');
	if (pg) return path.dirname(fs.realpathSync(pg));
	throw new Error(
		'PostgreSQL not found: apt-get install postgresql (scripts/e2e/ci-queue.sh does)',
	);
}

// ---------- Redis ----------

/** redis-server on 127.0.0.1:`port`, no persistence. Resolves with `{ port, proc, stop() }`. */
async function startRedis({ port, dir = path.join(QUEUE_DIR, 'redis') } = {}) {
	const bin = which('redis-server');
	if (!bin)
		throw new Error(
			'redis-server not found: apt-get install redis-server (scripts/e2e/ci-queue.sh does)',
		);
	port = port || (await e2e.reservePort());
	fs.rmSync(dir, { recursive: true, force: true });
	fs.mkdirSync(dir, { recursive: true });
	const proc = spawnOwned(
		'redis',
		bin,
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--save',
			'',
			'--appendonly',
			'no',
			'--dir',
			dir,
			'--daemonize',
			'no',
		],
		{
			logFile: path.join(dir, 'redis.log'),
		},
	);
	const cli = which('redis-cli');
	await waitUntil(
		async () => {
			if (cli)
				return (
					spawnSync(cli, ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() ===
					'PONG'
				);
			return !(await e2e.portIsFree(port));
		},
		{ timeoutMs: 20000, what: 'redis-server', proc },
	);
	log(`redis-server on 127.0.0.1:${port} (pid ${proc.pid})`);
	return { port, proc, stop: () => stopProc(proc) };
}

// ---------- PostgreSQL ----------

/** Whether a user other than the owner can reach `dir`: every existing folder above it lets others through. */
function reachableByOthers(dir) {
	for (let at = path.dirname(path.resolve(dir)); ; at = path.dirname(at)) {
		if (fs.existsSync(at) && (fs.statSync(at).mode & 0o001) === 0) return false;
		if (at === path.dirname(at)) return true;
	}
}

/**
 * A throw-away PostgreSQL cluster (initdb into `dir`, trust auth on loopback only), database
 * `n8n` owned by role `n8n`. As root, the server runs as the `postgres` system user (PostgreSQL
 * refuses to run as root), so its folder moves to the system temp folder when `dir` lies in a
 * private one (a clone in `mktemp -d`). Resolves with `{ port, database, user, password, proc, stop() }`.
 */
async function startPostgres({
	port,
	dir = path.join(os.tmpdir(), `n8n-queue-pg-${process.pid}`),
} = {}) {
	const bin = postgresBinDir();
	port = port || (await e2e.reservePort());
	const logFile = path.join(path.dirname(dir), 'postgres.log');
	const isRoot = process.getuid && process.getuid() === 0;
	const asked = dir;
	if (isRoot && !reachableByOthers(dir)) {
		// A link from the folder asked for, so what looks there (ci-queue.sh's clean-up) finds it.
		fs.rmSync(asked, { recursive: true, force: true });
		dir = fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-queue-pg-'));
		fs.mkdirSync(path.dirname(asked), { recursive: true });
		fs.symlinkSync(dir, asked);
	}
	fs.rmSync(dir, { recursive: true, force: true });
	fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
	let uid;
	let gid;
	if (isRoot) {
		uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
		gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
		fs.chownSync(dir, uid, gid);
	}
	const dataDir = path.join(dir, 'data');
	const r = spawnSync(
		path.join(bin, 'initdb'),
		['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'],
		{
			encoding: 'utf8',
			uid,
			gid,
			cwd: dir,
		},
	);
	if (r.status !== 0) throw new Error(`initdb failed:\n${r.stdout}\n${r.stderr}`);
	const proc = spawnOwned(
		'postgres',
		path.join(bin, 'postgres'),
		[
			'-D',
			dataDir,
			'-p',
			String(port),
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			`unix_socket_directories=${dir}`,
			'-c',
			'fsync=off',
			'-c',
			'synchronous_commit=off',
			'-c',
			'full_page_writes=off',
			'-c',
			'max_connections=200',
		],
		{ logFile, uid, gid, cwd: dir },
	);
	const psql = (sql) =>
		spawnSync(
			path.join(bin, 'psql'),
			[
				'-h',
				'127.0.0.1',
				'-p',
				String(port),
				'-U',
				'postgres',
				'-d',
				'postgres',
				'-v',
				'ON_ERROR_STOP=1',
				'-Atc',
				sql,
			],
			{
				encoding: 'utf8',
			},
		);
	await waitUntil(async () => psql('select 1').status === 0, {
		timeoutMs: 30000,
		what: 'postgres',
		proc,
	});
	const password = 'n8n-e2e-queue';
	for (const sql of [
		`create role n8n login password '${password}'`,
		'create database n8n owner n8n',
	]) {
		const q = psql(sql);
		if (q.status !== 0) throw new Error(`psql ${sql}: ${q.stderr}`);
	}
	log(`postgres on 127.0.0.1:${port} (pid ${proc.pid}, data ${dataDir})`);
	const pg = {
		port,
		host: '127.0.0.1',
		database: 'n8n',
		user: 'n8n',
		password,
		proc,
		/** Runs SQL as the n8n role; returns psql's unaligned rows (`|`-separated). */
		query(sql) {
			const q = spawnSync(
				path.join(bin, 'psql'),
				[
					'-h',
					'127.0.0.1',
					'-p',
					String(port),
					'-U',
					'n8n',
					'-d',
					'n8n',
					'-v',
					'ON_ERROR_STOP=1',
					'-Atc',
					sql,
				],
				{ encoding: 'utf8' },
			);
			if (q.status !== 0) throw new Error(`psql: ${q.stderr}`);
			return q.stdout
				.split('\n')
				.filter((l) => l !== '')
				.map((l) => l.split('|'));
		},
		async stop() {
			await stopProc(proc);
			fs.rmSync(dir, { recursive: true, force: true });
			fs.rmSync(asked, { recursive: true, force: true });
		},
	};
	return pg;
}

// ---------- n8n main and workers ----------

/** Environment shared by every n8n process of the cluster (queue mode, Redis, PostgreSQL). */
function queueEnv({ redis, pg }) {
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: pg.host,
		DB_POSTGRESDB_PORT: String(pg.port),
		DB_POSTGRESDB_DATABASE: pg.database,
		DB_POSTGRESDB_USER: pg.user,
		DB_POSTGRESDB_PASSWORD: pg.password,
		// Manual runs (editor, REST) go to the workers too, like production executions.
		OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
		// Every process needs the same key: credentials are encrypted in the shared database.
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		// A crashed worker's job: n8n's default lock is 60 s, checked every 30 s; shorter here so
		// the test sees the outcome in seconds (same behaviour, smaller numbers).
		QUEUE_WORKER_LOCK_DURATION: process.env.QUEUE_WORKER_LOCK_DURATION || '15000',
		QUEUE_WORKER_LOCK_RENEW_TIME: process.env.QUEUE_WORKER_LOCK_RENEW_TIME || '5000',
		QUEUE_WORKER_STALLED_INTERVAL: process.env.QUEUE_WORKER_STALLED_INTERVAL || '5000',
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '10',
		// Save each node's progress so a crashed execution shows how far it got.
		EXECUTIONS_DATA_SAVE_EXECUTION_PROGRESS: 'true',
	};
}

/**
 * An `n8n worker` process. Uses an N8nInstance for its user folder and environment only (it
 * starts `n8n worker` instead of `n8n start`). Ready when its health endpoint answers.
 */
class N8nWorker {
	constructor({ name, userFolder, env, healthPort, concurrency = 10, fresh = true }) {
		this.name = name;
		this.healthPort = healthPort;
		this.concurrency = concurrency;
		this.inst = new e2e.N8nInstance({
			userFolder,
			port: healthPort,
			env,
			fresh,
			encryptionKey: ENCRYPTION_KEY,
		});
		this.proc = null;
	}

	get userFolder() {
		return this.inst.userFolder;
	}

	get logFile() {
		return path.join(this.userFolder, 'worker.log');
	}

	async start({ timeoutMs = 180000 } = {}) {
		await this.inst.ensureBrokerPort();
		const t0 = Date.now();
		const env = this.inst.env({
			QUEUE_HEALTH_CHECK_ACTIVE: 'true',
			QUEUE_HEALTH_CHECK_PORT: String(this.healthPort),
			N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
		});
		this.proc = spawnOwned(
			this.name,
			this.inst.info.nodeBin,
			[this.inst.info.n8nBin, 'worker', `--concurrency=${this.concurrency}`],
			{
				env,
				cwd: this.userFolder,
				logFile: this.logFile,
			},
		);
		this.logStart = 0;
		await waitUntil(
			async () => {
				const res = await fetch(`http://127.0.0.1:${this.healthPort}/healthz/readiness`);
				return res.status === 200 && /n8n worker is now ready/.test(readLog(this.proc));
			},
			{ timeoutMs, intervalMs: 500, what: `${this.name} readiness`, proc: this.proc },
		);
		log(
			`${this.name} ready after ${((Date.now() - t0) / 1000).toFixed(1)} s (pid ${this.proc.pid}, log ${path.relative(e2e.ROOT, this.logFile)})`,
		);
	}

	/** SIGKILL to the worker's whole process group (n8n and its task runner): a crash. */
	async kill() {
		if (!this.proc || this.proc.exitInfo) return;
		killGroup(this.proc.pid, 'SIGKILL');
		await this.proc.exited;
		log(`${this.name} killed (SIGKILL)`);
	}

	async stop() {
		if (this.proc) await stopProc(this.proc);
	}

	get running() {
		return !!this.proc && !this.proc.exitInfo;
	}

	log() {
		return (
			readLog(this.proc) ||
			(fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '')
		);
	}

	/** Execution ids this worker started / finished, from its log ("Worker started execution N"). */
	startedExecutions() {
		return [...this.log().matchAll(/Worker started execution (\d+)/g)].map((m) => m[1]);
	}

	finishedExecutions() {
		return [...this.log().matchAll(/Worker finished execution (\d+)/g)].map((m) => m[1]);
	}

	packageLoadErrors() {
		return this.log()
			.split('\n')
			.filter(
				(l) =>
					/n8n-nodes-document-workflow|documentWorkflow/i.test(l) &&
					/error|failed|cannot|unrecognized/i.test(l),
			);
	}
}

/**
 * The whole cluster: Redis, PostgreSQL, a main and `workers` workers, the package installed in
 * every process's user folder.
 */
class QueueCluster {
	/**
	 * @param {object} opts
	 * @param {string} opts.tgz packed package
	 * @param {number} [opts.mainPort] editor port of the main (default 5700)
	 * @param {number} [opts.workers] number of workers (default 2)
	 * @param {number} [opts.concurrency] per worker (default 10)
	 * @param {string} [opts.dir] scratch folder (default .e2e/queue)
	 * @param {object} [opts.env] extra environment for every process
	 */
	constructor(opts) {
		this.tgz = opts.tgz;
		this.mainPort = opts.mainPort || 5700;
		this.workerCount = opts.workers ?? 2;
		this.concurrency = opts.concurrency || 10;
		this.dir = opts.dir || QUEUE_DIR;
		this.extraEnv = opts.env || {};
		this.redis = null;
		this.pg = null;
		this.main = null;
		this.workers = [];
	}

	/** Redis, PostgreSQL, the main (migrations, owner), the package in every user folder. Workers: startWorkers(). */
	async startServices() {
		fs.mkdirSync(this.dir, { recursive: true });
		this.redis = await startRedis({ dir: path.join(this.dir, 'redis') });
		this.pg = await startPostgres({ dir: path.join(this.dir, 'pg') });
		this.env = { ...queueEnv({ redis: this.redis, pg: this.pg }), ...this.extraEnv };
		this.main = new e2e.N8nInstance({
			userFolder: path.join(this.dir, 'main'),
			port: this.mainPort,
			env: this.env,
			fresh: true,
			encryptionKey: ENCRYPTION_KEY,
		});
		e2e.installPackageInto(this.main.userFolder, this.tgz);
		for (let i = 1; i <= this.workerCount; i++) {
			const w = new N8nWorker({
				name: `worker${i}`,
				userFolder: path.join(this.dir, `worker${i}`),
				env: this.env,
				healthPort: await e2e.reservePort(),
				concurrency: this.concurrency,
			});
			e2e.installPackageInto(w.userFolder, this.tgz);
			this.workers.push(w);
		}
	}

	async startMain() {
		await this.main.start();
		if (this.main.owner) await this.main.login();
		else await this.main.setupOwner();
	}

	async startWorkers() {
		await Promise.all(this.workers.filter((w) => !w.running).map((w) => w.start()));
	}

	/**
	 * Resolves once the main has registered production webhooks for `paths` (rows in
	 * webhook_entity): /healthz answers before the main has activated the published workflows.
	 */
	async waitForWebhooks(paths, { timeoutMs = 60000 } = {}) {
		const list = paths.map((p) => `'${p.replace(/'/g, "''")}'`).join(',');
		await waitUntil(
			async () =>
				Number(
					this.pg.query(
						`select count(distinct "webhookPath") from webhook_entity where "webhookPath" in (${list})`,
					)[0][0],
				) === paths.length,
			{ timeoutMs, intervalMs: 250, what: `webhooks ${paths.join(', ')} registered` },
		);
	}

	/** Executions as stored in PostgreSQL: `{ id, workflowId, mode, status, finished, retryOf, retrySuccessId }`. */
	executions(workflowId) {
		const rows = this.pg.query(
			`select id, "workflowId", mode, status, finished, coalesce("retryOf", ''), coalesce("retrySuccessId", ''), coalesce(to_char("startedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS'), ''), coalesce(to_char("stoppedAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS'), '') from execution_entity${
				workflowId ? ` where "workflowId" = '${workflowId.replace(/'/g, "''")}'` : ''
			} order by id`,
		);
		return rows.map(
			([id, wf, mode, status, finished, retryOf, retrySuccessId, startedAt, stoppedAt]) => ({
				id,
				workflowId: wf,
				mode,
				status,
				finished: finished === 't',
				retryOf: retryOf || null,
				retrySuccessId: retrySuccessId || null,
				startedAt,
				stoppedAt,
			}),
		);
	}

	/** Which worker ran each execution id, from the workers' logs: Map id -> worker name. */
	executionWorkers() {
		const byId = new Map();
		for (const w of this.workers)
			for (const id of w.startedExecutions()) byId.set(id, [...(byId.get(id) || []), w.name]);
		return byId;
	}

	async stopAll() {
		const errors = [];
		const step = async (what, fn) => {
			try {
				await fn();
			} catch (e) {
				errors.push(`${what}: ${e.message}`);
			}
		};
		for (const w of this.workers) await step(w.name, () => w.stop());
		if (this.main) await step('main', () => this.main.stop());
		if (this.pg) await step('postgres', () => this.pg.stop());
		if (this.redis) await step('redis', () => this.redis.stop());
		if (errors.length) log(`cleanup problems: ${errors.join('; ')}`);
	}
}

module.exports = {
	QUEUE_DIR,
	ENCRYPTION_KEY,
	startRedis,
	startPostgres,
	queueEnv,
	N8nWorker,
	QueueCluster,
	spawnOwned,
	stopProc,
	stopEverything,
	waitUntil,
};
