'use strict';
/**
 * Launcher for a real n8n (2.x on Node 24, 1.x on Node 22) with this package installed the way
 * a user installs a community package: build, pack, install the tarball into
 * `<N8N_USER_FOLDER>/.n8n/nodes`, start n8n headless, create the owner, import credentials and
 * workflows, execute, read executions, stop, restart.
 *
 * Plain CommonJS for Node >= 20: used by scripts/dev.js and by the jest e2e suite (test/e2e/).
 * The n8n installs come from scripts/e2e/n8n-install.js (a user-level cache shared by every clone).
 */
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { checkInstall, ensureInstall, installInfo } = require('./n8n-install');
const {
	N8N_BROKER_DEFAULT_PORT,
	PORTS,
	portIsFree,
	reservePort,
	withPortOffset,
} = require('./ports');
const { killGroup, own, spawnOwned, stopProc } = require('./processes');

const ROOT = path.resolve(__dirname, '..', '..');
/** The run's work folders: n8n user folders, the packed tarball, logs (the installs: n8n-install.js). */
const CACHE = process.env.E2E_CACHE || path.join(ROOT, '.e2e');
const PACKAGE_NAME = 'n8n-nodes-document-workflow';
const NODE_TYPES = [
	`${PACKAGE_NAME}.documentWorkflow`,
	`${PACKAGE_NAME}.documentWorkflowTrigger`,
	`${PACKAGE_NAME}.documentWorkflowWebhookTrigger`,
];
const CREDENTIAL_TYPE = 'documentWorkflowApi';

/**
 * The two n8n lines the package is tested on. `major` picks one: '2' (default) or '1'. The
 * versions live in n8n-versions.json, the one place the installer reads them from too.
 */
const VERSIONS = {
	2: { n8n: installInfo('2').version, nodeMajor: installInfo('2').nodeMajor },
	1: { n8n: installInfo('1').version, nodeMajor: installInfo('1').nodeMajor },
};

function log(...args) {
	if (process.env.E2E_QUIET) return;
	// stderr directly: jest's console adds a stack trace to every line.
	process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${args.join(' ')}\n`);
}

/** A line's install in the user-level cache (n8n-install.js): its folder, Node and n8n binaries. */
function versionInfo(major = '2') {
	const info = installInfo(major);
	return {
		major: info.line,
		version: info.version,
		nodeMajor: info.nodeMajor,
		dir: info.dir,
		nodeDir: info.nodeDir,
		nodeBin: info.nodeBin,
		n8nBin: info.n8nBin,
		marker: info.marker,
	};
}

function isInstalled(major = '2') {
	return checkInstall(installInfo(major)).ok;
}

/** The line's install, made first (a few minutes, once per machine and lockfile) when missing. */
function ensureInstalled(major = '2') {
	ensureInstall(major);
	return versionInfo(major);
}

/** `npm run build` in the repository. Throws with the output when it fails. */
function buildPackage() {
	log('npm run build');
	const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', env: process.env });
	if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`);
}

/** `npm pack` into `destDir`; returns the tarball's absolute path. */
function packPackage(destDir = path.join(CACHE, 'pack')) {
	fs.mkdirSync(destDir, { recursive: true });
	for (const f of fs.readdirSync(destDir)) if (f.endsWith('.tgz')) fs.rmSync(path.join(destDir, f));
	const out = execFileSync(
		'npm',
		['pack', '--json', '--ignore-scripts', '--pack-destination', destDir],
		{
			cwd: ROOT,
			encoding: 'utf8',
		},
	);
	const [{ filename }] = JSON.parse(out);
	const tgz = path.join(destDir, path.basename(filename));
	log(`packed ${path.relative(ROOT, tgz)}`);
	return tgz;
}

/** Build (unless skipped) and pack; returns the tarball path. */
function buildAndPack({ build = true, destDir } = {}) {
	if (build) buildPackage();
	return packPackage(destDir);
}

/**
 * Installs the tarball where n8n looks for community packages:
 * `<userFolder>/.n8n/nodes`, a bare private package, `npm install <tgz> --omit=dev --omit=peer --ignore-scripts`.
 */
function installPackageInto(userFolder, tgz) {
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	fs.mkdirSync(nodesDir, { recursive: true });
	const pj = path.join(nodesDir, 'package.json');
	if (!fs.existsSync(pj))
		fs.writeFileSync(pj, JSON.stringify({ name: 'installed-nodes', private: true }, null, 2));
	execFileSync(
		'npm',
		[
			'install',
			tgz,
			'--omit=dev',
			'--omit=peer',
			'--ignore-scripts',
			'--no-audit',
			'--no-fund',
			'--loglevel=error',
		],
		{ cwd: nodesDir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
	);
	const installed = path.join(nodesDir, 'node_modules', PACKAGE_NAME, 'package.json');
	if (!fs.existsSync(installed))
		throw new Error(`package not found at ${installed} after npm install`);
	log(`installed ${path.basename(tgz)} into ${path.relative(ROOT, nodesDir)}`);
	return nodesDir;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A 16-character id in n8n's style (workflow and credential ids). */
function n8nId() {
	const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
	const bytes = crypto.randomBytes(16);
	return Array.from(bytes, (b) => abc[b % abc.length]).join('');
}

const LOAD_ERROR_PATTERNS = [
	// n8n 2.x/1.x: 'Failed to load package "n8n-nodes-document-workflow"' followed by the error.
	/(error|failed|could not|cannot|unable)[^\n]*n8n-nodes-document-workflow/i,
	/n8n-nodes-document-workflow[^\n]*(error|failed|could not|cannot)/i,
	/(error|failed|could not|cannot)[^\n]*(documentWorkflowApi|DocumentWorkflow(Trigger)?\.node)/i,
	/Unrecognized node type[^\n]*documentWorkflow/i,
	/Unrecognized credential type[^\n]*documentWorkflowApi/i,
];

/**
 * Whether an error is fetch's network failure (or a cut-off JSON body): by name, since under jest
 * the test's `TypeError` is its sandbox realm's, not the one Node's fetch throws.
 */
const isErrorNamed = (error, ...names) => names.includes(error?.name);

/**
 * `attempt()` until it returns, tried again (up to `tries`, `waitMs(n)` after the n-th) while
 * `transient(error)`: a failure that says nothing about the package, such as n8n closing a
 * kept-alive connection under load or serving a file it is still writing.
 */
async function retried(attempt, transient, { tries = 3, waitMs = (n) => 500 * n } = {}) {
	for (let n = 1; ; n++) {
		try {
			return await attempt();
		} catch (error) {
			if (n >= tries || !transient(error)) throw error;
			await new Promise((resolve) => setTimeout(resolve, waitMs(n)));
		}
	}
}

/** fetch for a GET, tried again on a network error (fetch's TypeError); HTTP errors are answers. */
const fetchGet = (url, init) =>
	retried(
		() => fetch(url, init),
		(e) => isErrorNamed(e, 'TypeError'),
	);

/** The ports above 1023 that fetch refuses to connect to ("bad ports", https://fetch.spec.whatwg.org/#port-blocking). */
const FETCH_BAD_PORTS = new Set([
	1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669,
	6679, 6697, 10080,
]);

class N8nInstance {
	/**
	 * @param {object} opts
	 * @param {string} [opts.major] '2' (default) or '1'
	 * @param {string} opts.userFolder N8N_USER_FOLDER (created; `fresh: true` empties it first)
	 * @param {number} [opts.port] editor port (default PORTS.dev; scripts/e2e/ports.js lists every port in use)
	 * @param {number} [opts.brokerPort] task broker port (default: one from reservePort())
	 * @param {object} [opts.env] extra environment
	 * @param {boolean} [opts.fresh] remove the user folder first
	 */
	constructor(opts) {
		this.info = versionInfo(opts.major || '2');
		this.userFolder = path.resolve(opts.userFolder);
		// E2E_PORT_OFFSET moves every instance of a run, so two checkouts can run their suites side by side.
		this.port = withPortOffset(opts.port || PORTS.dev);
		if (this.port === N8N_BROKER_DEFAULT_PORT)
			throw new Error(`port ${this.port} is the n8n task broker port; choose another`);
		if (FETCH_BAD_PORTS.has(this.port)) {
			throw new Error(
				`port ${this.port} is one that fetch refuses to connect to (the Fetch standard's "bad ports"), so n8n's health check could never pass there; choose another E2E_PORT_OFFSET`,
			);
		}
		this.brokerPort = opts.brokerPort;
		this.extraEnv = opts.env || {};
		this.encryptionKey = opts.encryptionKey || 'e2e-document-workflow-encryption-key';
		this.logFile = opts.logFile || path.join(this.userFolder, 'n8n.log');
		this.child = null;
		this.cookie = null;
		this.browserId = 'e2e-browser-' + crypto.randomBytes(6).toString('hex');
		this.owner = null;
		if (opts.fresh) fs.rmSync(this.userFolder, { recursive: true, force: true });
		fs.mkdirSync(this.userFolder, { recursive: true });
	}

	get baseUrl() {
		return `http://127.0.0.1:${this.port}`;
	}

	get editorUrl() {
		return `http://localhost:${this.port}`;
	}

	/** Environment for `n8n start` and the CLI commands. */
	env(extra = {}) {
		// Not inherited: jest's NODE_ENV=test makes n8n exit silently; the rest is jest's own.
		const inherited = { ...process.env };
		for (const k of Object.keys(inherited))
			if (k === 'NODE_ENV' || k.startsWith('JEST_') || k.startsWith('N8N_')) delete inherited[k];
		return {
			...inherited,
			PATH: `${path.dirname(this.info.nodeBin)}:${process.env.PATH}`,
			N8N_USER_FOLDER: this.userFolder,
			N8N_PORT: String(this.port),
			N8N_HOST: 'localhost',
			N8N_PROTOCOL: 'http',
			N8N_EDITOR_BASE_URL: this.editorUrl,
			N8N_ENCRYPTION_KEY: this.encryptionKey,
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_HIRING_BANNER_ENABLED: 'false',
			N8N_SECURE_COOKIE: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
			...(this.info.major === '1' ? { N8N_RUNNERS_ENABLED: 'true' } : {}),
			N8N_RUNNERS_BROKER_PORT: String(this.brokerPort),
			N8N_LOG_LEVEL: process.env.N8N_LOG_LEVEL || 'info',
			N8N_LOG_OUTPUT: 'console',
			EXECUTIONS_DATA_PRUNE: 'false',
			EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
			EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
			EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
			GENERIC_TIMEZONE: 'UTC',
			TZ: 'UTC',
			DB_TYPE: 'sqlite',
			NODE_OPTIONS: '',
			...this.extraEnv,
			...extra,
		};
	}

	async ensureBrokerPort() {
		if (!this.brokerPort) {
			this.brokerPort = await reservePort();
		}
	}

	/** Starts `n8n start` in its own process group; resolves once /healthz answers 200. */
	async start({ timeoutMs = 180000 } = {}) {
		if (this.child) throw new Error('n8n already started');
		await this.ensureBrokerPort();
		if (!(await portIsFree(this.port))) throw new Error(`port ${this.port} is already in use`);
		// Own process group (see processes.js): stop() ends n8n and its task runners together.
		// E2E_N8N_NICE: n8n at a lower CPU priority than the sandbox, which a real API would not share with it.
		const nice = process.env.E2E_N8N_NICE;
		const command = nice ? ['nice', '-n', nice, this.info.nodeBin] : [this.info.nodeBin];
		const proc = spawnOwned(
			`n8n ${this.info.version}`,
			command[0],
			[...command.slice(1), this.info.n8nBin, 'start'],
			{
				cwd: this.userFolder,
				env: this.env(),
				logFile: this.logFile,
			},
		);
		const child = proc.child;
		this.proc = proc;
		this.logStart = proc.logStart;
		this.child = child;
		this.exited = proc.exited;
		this.exited.then(() => {
			if (this.child === child) this.child = null;
		});
		log(
			`n8n ${this.info.version} starting on ${this.baseUrl} (pid ${child.pid}, log ${this.logFile})`,
		);
		const t0 = Date.now();
		let exitedEarly = null;
		this.exited.then((e) => (exitedEarly = e));
		while (Date.now() - t0 < timeoutMs) {
			if (exitedEarly) {
				throw new Error(
					`n8n exited during start (${JSON.stringify(exitedEarly)}):\n${this.logTail(60)}`,
				);
			}
			try {
				const res = await fetch(`${this.baseUrl}/healthz`);
				if (res.status === 200) {
					// /healthz answers while migrations still run: wait for readiness and the REST API too.
					const ready = await fetch(`${this.baseUrl}/healthz/readiness`).catch(() => null);
					const settings =
						ready && ready.status === 200
							? await fetch(`${this.baseUrl}/rest/settings`).catch(() => null)
							: null;
					if (settings && settings.status === 200) {
						log(
							`n8n ${this.info.version} healthy after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
						);
						return;
					}
				}
			} catch {
				/* not listening yet */
			}
			await sleep(500);
		}
		await this.stop();
		throw new Error(`n8n did not become healthy in ${timeoutMs} ms:\n${this.logTail(60)}`);
	}

	/**
	 * Resolves once this start of n8n has activated its published workflows (production webhooks
	 * registered, pollers started). start() resolves earlier: n8n's HTTP server, /healthz and the
	 * REST API answer before `n8n start` activates them (`activeWorkflowManager.init()` comes after
	 * `server.start()` in 2.41.1 and 1.123.81, commands/start.js), and it then logs "Editor is now
	 * accessible via". With the workflow publication service (durable cursors) activation goes on
	 * in the background after that line: wait for what the test needs instead.
	 */
	async waitForActivation({ timeoutMs = 120000 } = {}) {
		const t0 = Date.now();
		const logged = () =>
			fs.existsSync(this.logFile) &&
			fs
				.readFileSync(this.logFile)
				.subarray(this.logStart)
				.includes('Editor is now accessible via');
		while (!logged()) {
			if (!this.child) throw new Error(`n8n is not running:\n${this.logTail(40)}`);
			if (Date.now() - t0 > timeoutMs)
				throw new Error(
					`n8n did not activate its workflows in ${timeoutMs} ms (no "Editor is now accessible" line):\n${this.logTail(40)}`,
				);
			await sleep(250);
		}
	}

	/** SIGTERM to n8n's process group, SIGKILL after `graceMs`; resolves once it has exited. */
	async stop({ graceMs = 20000 } = {}) {
		if (!this.child) return;
		const t0 = Date.now();
		// Task runners or other stragglers in the group: settleMs, then none survives.
		await stopProc(this.proc, { graceMs, settleMs: 200 });
		this.child = null;
		this.cookie = null;
		log(`n8n stopped in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
	}

	/** SIGKILL to n8n's whole process group at once, with no warning (a crash); resolves once it has exited. */
	async kill() {
		if (!this.child) return;
		// The registry (processes.js) forgets the process once it has exited.
		killGroup(this.proc.pid, 'SIGKILL');
		await this.proc.exited;
		this.child = null;
		this.cookie = null;
		log(`n8n killed (SIGKILL)`);
	}

	/**
	 * Starts n8n again after kill(), as a user would after a crash. n8n 2.41.1's crash recovery
	 * can itself crash on an execution SIGKILLed before it was marked started (its insights and
	 * statistics hooks read a null `startedAt`: "Cannot read properties of null (reading
	 * 'getTime')"), and n8n exits. It notes the attempt, and its next start skips a recovery that
	 * failed once and marks the execution crashed; so a start that ends that way is made once more.
	 */
	async startAfterKill(opts) {
		try {
			await this.start(opts);
		} catch (error) {
			if (
				!/n8n exited during start/.test(error.message) ||
				!/\[Recovery\]|getTime/.test(error.message)
			)
				throw error;
			log(
				`n8n ${this.info.version} exited in its own crash recovery; starting it again (it skips a recovery that failed once)`,
			);
			await this.start(opts);
		}
	}

	async restart(opts) {
		await this.stop();
		await this.start(opts);
		if (this.owner) await this.login();
	}

	get running() {
		return !!this.child;
	}

	/** Runs an n8n CLI command (`import:workflow`, `execute`, ...) with this instance's environment. */
	cli(args, { timeoutMs = 300000, allowFailure = false } = {}) {
		return new Promise(async (resolve, reject) => {
			const brokerPort = await reservePort();
			const child = spawn(this.info.nodeBin, [this.info.n8nBin, ...args], {
				cwd: this.userFolder,
				env: this.env({ N8N_RUNNERS_BROKER_PORT: String(brokerPort) }),
				stdio: ['ignore', 'pipe', 'pipe'],
				detached: true,
			});
			own(`n8n ${args[0]}`, child);
			let stdout = '';
			let stderr = '';
			child.stdout.on('data', (d) => (stdout += d));
			child.stderr.on('data', (d) => (stderr += d));
			const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), timeoutMs);
			child.on('exit', () => {
				clearTimeout(timer);
				killGroup(child.pid, 'SIGKILL'); // stragglers in the group
			});
			// Once its output is read to the end: 'exit' may come before the last of a large one.
			child.on('close', (code, signal) => {
				fs.appendFileSync(
					path.join(this.userFolder, 'cli.log'),
					`\n===== n8n ${args.join(' ')} -> ${code ?? signal}\n${stdout}\n${stderr}\n`,
				);
				const result = { code, signal, stdout, stderr };
				if (code !== 0 && !allowFailure) {
					reject(
						Object.assign(
							new Error(`n8n ${args.join(' ')} failed (${code ?? signal}):\n${stdout}\n${stderr}`),
							result,
						),
					);
				} else resolve(result);
			});
		});
	}

	/** Writes `credentials` to a temporary file and runs `n8n import:credentials` (data in plain text; n8n encrypts it). */
	async importCredentials(credentials) {
		await this.importFromFile('import:credentials', 'credentials', credentials);
	}

	/** Writes `workflows` to a file and runs `n8n import:workflow`. Ids are kept (give each one). */
	async importWorkflows(workflows) {
		await this.importFromFile('import:workflow', 'workflows', workflows);
	}

	/** Runs an n8n import command on `data` written to a file in the user folder, removed afterwards. */
	async importFromFile(command, what, data) {
		const file = path.join(this.userFolder, `import-${what}-${Date.now()}.json`);
		fs.writeFileSync(file, JSON.stringify(data, null, 2));
		try {
			// Beside a running n8n on the same SQLite file, the import can meet its write lock and fail
			// at once (SQLITE_BUSY); an import of the same ids again replaces what a failed one left.
			for (let attempt = 1; ; attempt++) {
				const res = await this.cli([command, `--input=${file}`], { allowFailure: true });
				if (res.code === 0) break;
				const output = `${res.stdout}\n${res.stderr}`;
				if (attempt === 3 || !/SQLITE_BUSY/.test(output))
					throw Object.assign(
						new Error(`n8n ${command} failed (${res.code ?? res.signal}):\n${output}`),
						res,
					);
				log(
					`n8n ${command}: the database was locked (SQLITE_BUSY), attempt ${attempt}; again in 2 s`,
				);
				await new Promise((resolve) => setTimeout(resolve, 2000));
			}
		} finally {
			fs.rmSync(file, { force: true }); // it may hold plain secrets
		}
	}

	/** Activates a workflow from the CLI (takes effect at the next start). */
	async activateWorkflow(id) {
		if (this.info.major === '1') await this.cli(['update:workflow', `--id=${id}`, '--active=true']);
		else await this.cli(['publish:workflow', `--id=${id}`]);
	}

	/**
	 * `n8n execute --id=X --rawOutput`: runs a workflow that starts with a Manual Trigger.
	 * Resolves with `{ ok, run, stdout, stderr }`; `run` is the parsed IRun (`data.resultData.runData`).
	 */
	async execute(id, { timeoutMs = 300000 } = {}) {
		const res = await this.cli(['execute', `--id=${id}`, '--rawOutput'], {
			timeoutMs,
			allowFailure: true,
		});
		const run = parseExecuteOutput(res.stdout);
		// n8n's CLI on Node 24 has died by a signal (SIGSEGV) while shutting down after printing a
		// finished run (n8n 2.41.1, queue mode; n8n-io/n8n#26865 and #31437 report such native
		// crashes): the finished run it printed, complete, is what ran.
		const finished = run?.finished === true && run.status === 'success';
		const ended = res.code === 0 || (res.signal !== null && finished);
		if (res.signal !== null && finished)
			log(`n8n execute --id=${id} printed a finished run, then died by ${res.signal}`);
		const ok = ended && !!run?.data && !run.data.resultData?.error;
		return { ok, run, ...res };
	}

	// ---------- REST (owner session) ----------

	async rest(method, urlPath, body, { raw = false, headers = {} } = {}) {
		const res = await (method === 'GET' ? fetchGet : fetch)(
			`${this.baseUrl}${urlPath.startsWith('/') ? '' : '/rest/'}${urlPath}`,
			{
				method,
				headers: {
					'content-type': 'application/json',
					'browser-id': this.browserId,
					...(this.cookie ? { cookie: this.cookie } : {}),
					...headers,
				},
				body: body === undefined ? undefined : JSON.stringify(body),
			},
		);
		if (raw) return res;
		const text = await res.text();
		let json;
		try {
			json = text ? JSON.parse(text) : undefined;
		} catch {
			json = text;
		}
		if (!res.ok) {
			throw Object.assign(
				new Error(`${method} ${urlPath} -> ${res.status}: ${text.slice(0, 500)}`),
				{
					status: res.status,
					body: json,
				},
			);
		}
		return json && typeof json === 'object' && 'data' in json && Object.keys(json).length === 1
			? json.data
			: json;
	}

	/** Creates the owner account (once per user folder) and logs in. */
	async setupOwner(owner = {}) {
		this.owner = {
			email: owner.email || 'owner@example.com',
			firstName: owner.firstName || 'Dev',
			lastName: owner.lastName || 'Owner',
			password: owner.password || 'E2eOwner-Passw0rd',
		};
		const res = await this.rest('POST', '/rest/owner/setup', this.owner, { raw: true });
		if (!res.ok) {
			const text = await res.text();
			// Already set up (restarted user folder): logging in below tells whether the password matches.
			if (!/already/i.test(text)) throw new Error(`owner setup failed: ${res.status} ${text}`);
		}
		await this.login();
		return this.owner;
	}

	async login() {
		const { email, password } = this.owner;
		const res = await this.rest(
			'POST',
			'/rest/login',
			{ emailOrLdapLoginId: email, email, password },
			{ raw: true },
		);
		if (!res.ok) throw new Error(`login failed: ${res.status} ${await res.text()}`);
		const cookies =
			typeof res.headers.getSetCookie === 'function'
				? res.headers.getSetCookie()
				: [res.headers.get('set-cookie')];
		this.cookie = cookies
			.filter(Boolean)
			.map((c) => c.split(';')[0])
			.join('; ');
		if (!/n8n-auth=/.test(this.cookie))
			throw new Error(`login gave no n8n-auth cookie: ${cookies}`);
		return this.cookie;
	}

	/**
	 * Node and credential type names n8n serves to the editor. n8n writes these files in the
	 * background after it answers /healthz (FrontendService: `void this.generateTypes()`, again
	 * after loading community packages) and serves them with sendFile, so a file read while it is
	 * being rewritten ends in a closed socket or a cut-off body: read until a whole file arrives.
	 */
	async loadedTypes() {
		const get = (urlPath) =>
			retried(
				async () => {
					const res = await fetch(`${this.baseUrl}${urlPath}`, { headers: this.authHeaders() });
					if (!res.ok) throw new Error(`GET ${urlPath}: ${res.status} ${await res.text()}`);
					return JSON.parse(await res.text());
				},
				// A closed socket, or a body cut off mid-write; an HTTP error fails at once.
				(error) => isErrorNamed(error, 'TypeError', 'SyntaxError'),
				{ tries: 60, waitMs: () => 1000 },
			);
		const nodes = await get('/types/nodes.json');
		const creds = await get('/types/credentials.json');
		return {
			nodes: nodes.map((n) => n.name),
			credentials: creds.map((c) => c.name),
			nodeDescriptions: nodes,
		};
	}

	authHeaders() {
		return { 'browser-id': this.browserId, ...(this.cookie ? { cookie: this.cookie } : {}) };
	}

	/** Executions of a workflow (newest first), summaries only; pages through all of them. */
	async listExecutions(workflowId) {
		const all = [];
		let position = '';
		for (;;) {
			const filter = encodeURIComponent(JSON.stringify({ workflowId }));
			const page = await this.rest('GET', `/rest/executions?filter=${filter}&limit=100${position}`);
			const results = Array.isArray(page) ? page : page.results || page.data?.results || [];
			all.push(...results);
			if (results.length < 100) break;
			// n8n 2.41 pages with a cursor (and refuses lastId); 1.x with lastId.
			const cursor = page?.nextCursor ?? page?.data?.nextCursor;
			if (cursor === null) break;
			position =
				typeof cursor === 'string'
					? `&cursor=${encodeURIComponent(cursor)}`
					: `&lastId=${results[results.length - 1].id}`;
		}
		return all;
	}

	/** One execution with its run data unflattened (n8n stores it with `flatted`). */
	async getExecution(id) {
		const ex = await this.rest('GET', `/rest/executions/${id}`);
		if (ex && typeof ex.data === 'string') ex.data = this.unflatten(ex.data);
		return ex;
	}

	unflatten(text) {
		const flatted = require(
			require.resolve('flatted', { paths: [path.join(this.info.dir, 'node_modules', 'n8n')] }),
		);
		return flatted.parse(text);
	}

	/** Items output by `nodeName` in a run (first output, all runs of that node concatenated). */
	static nodeOutput(run, nodeName) {
		const runData = run?.data?.resultData?.runData || run?.resultData?.runData || {};
		const runs = runData[nodeName];
		if (!runs) return undefined;
		return runs.flatMap((r) => (r.data?.main?.[0] || []).filter(Boolean));
	}

	/** Bytes of a binary entry of an item output, wherever n8n keeps them (inline base64 or on disk). */
	binaryBuffer(binary) {
		if (binary.data && binary.data !== 'filesystem' && !binary.id)
			return Buffer.from(binary.data, 'base64');
		if (binary.id) {
			const [mode, rest] = [
				binary.id.slice(0, binary.id.indexOf(':')),
				binary.id.slice(binary.id.indexOf(':') + 1),
			];
			if (mode.startsWith('filesystem')) {
				// 2.x keeps binaries under .n8n/storage, 1.x under .n8n/binaryData.
				const candidates = [
					path.join(this.userFolder, '.n8n', 'storage', rest),
					path.join(this.userFolder, '.n8n', 'binaryData', rest),
					path.join(this.userFolder, '.n8n', 'binaryData', path.basename(rest)),
				];
				for (const c of candidates) if (fs.existsSync(c)) return fs.readFileSync(c);
				throw new Error(`binary ${binary.id} not found on disk (${candidates.join(', ')})`);
			}
			throw new Error(`binary mode ${mode} not readable from the test`);
		}
		return Buffer.from(binary.data || '', 'base64');
	}

	// ---------- log ----------

	log() {
		return fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '';
	}

	logTail(lines = 40) {
		return this.log().split('\n').slice(-lines).join('\n');
	}

	/** Lines of n8n's log that report a problem loading this package's nodes or credential. */
	packageLoadErrors() {
		const text =
			this.log() +
			(fs.existsSync(path.join(this.userFolder, 'cli.log'))
				? fs.readFileSync(path.join(this.userFolder, 'cli.log'), 'utf8')
				: '');
		const all = text.split('\n');
		// Each matching line with the two lines after it (n8n prints the error message there).
		return all.flatMap((l, i) =>
			LOAD_ERROR_PATTERNS.some((re) => re.test(l)) ? [all.slice(i, i + 3).join(' | ')] : [],
		);
	}
}

/** `n8n execute --rawOutput` prints the run as JSON, sometimes after log lines: take the JSON part. */
function parseExecuteOutput(stdout) {
	const text = stdout.trim();
	if (!text) return null;
	try {
		return JSON.parse(text);
	} catch {
		/* log lines around it */
	}
	// The run is printed indented, from a line "{" to a line "}"; log lines before or after it
	// may hold braces of their own (an object without `data` is no run).
	const starts = [...text.matchAll(/(^|\n)\{/g)].map((m) => m.index + m[1].length);
	const ends = [...text.matchAll(/\n\}/g)].map((m) => m.index + 2).reverse();
	for (const start of starts)
		for (const end of ends.filter((at) => at > start)) {
			try {
				const value = JSON.parse(text.slice(start, end));
				if (value && typeof value === 'object' && value.data) return value;
			} catch {
				/* keep looking */
			}
		}
	return null;
}

/** A credential of type documentWorkflowApi as `n8n import:credentials` expects it. */
function documentWorkflowCredential({
	id = n8nId(),
	name = 'Document Workflow API (sandbox)',
	baseUrl,
	apiKey,
	workspaceId,
}) {
	const data = { baseUrl, apiKey };
	if (workspaceId) data.workspaceId = workspaceId;
	const now = new Date().toISOString();
	return { id, name, type: CREDENTIAL_TYPE, data, createdAt: now, updatedAt: now };
}

/** Which sandbox workflow an example's empty Workflow ID gets (default: the JSON-output one). */
const EXAMPLE_WORKFLOW_VAR = { 'submit-and-wait-binary.json': 'SANDBOX_BINARY_WORKFLOW_ID' };
const UUID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * Wires one example (as a user imports it: empty Workflow ID, no credentials) to the sandbox,
 * the way a user would after import: the sandbox workflow's id into every empty Workflow ID, the
 * credentials onto the nodes that need them, and the agent example's question pointed at a run
 * the sandbox holds. `vars`: SANDBOX_WORKFLOW_ID, SANDBOX_BINARY_WORKFLOW_ID, CREDENTIAL_ID
 * (+ CREDENTIAL_NAME), OPENAI_CREDENTIAL_ID (+ OPENAI_CREDENTIAL_NAME), AGENT_RUN_ID; any may be
 * missing, and then that part stays as the file has it.
 */
function wireExample(file, wf, vars) {
	const workflowId = vars[EXAMPLE_WORKFLOW_VAR[file] || 'SANDBOX_WORKFLOW_ID'];
	for (const node of wf.nodes) {
		const ours = node.type.startsWith(`${PACKAGE_NAME}.`);
		if (ours && node.parameters.workflowId === '' && workflowId)
			node.parameters.workflowId = workflowId;
		if (ours && vars.CREDENTIAL_ID) {
			node.credentials = {
				[CREDENTIAL_TYPE]: {
					id: vars.CREDENTIAL_ID,
					name: vars.CREDENTIAL_NAME || 'Document Workflow API (sandbox)',
				},
			};
		}
		if (node.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi' && vars.OPENAI_CREDENTIAL_ID) {
			node.credentials = {
				openAiApi: {
					id: vars.OPENAI_CREDENTIAL_ID,
					name: vars.OPENAI_CREDENTIAL_NAME || 'OpenAI (stand-in)',
				},
			};
		}
		if (node.name === 'Question' && vars.AGENT_RUN_ID) {
			for (const a of node.parameters.assignments.assignments)
				a.value = String(a.value).replace(UUID_IN_TEXT, vars.AGENT_RUN_ID);
		}
	}
	return wf;
}

/**
 * Reads examples/*.json, wires each to the sandbox (wireExample), gives each a fresh id unless
 * `keepIds`, and returns `{ file, workflow }` pairs.
 */
function loadExamples(vars, { dir = path.join(ROOT, 'examples'), keepIds = false } = {}) {
	return fs
		.readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((file) => {
			const wf = wireExample(file, JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')), vars);
			if (!keepIds || !wf.id) wf.id = n8nId();
			wf.active = false;
			return { file, workflow: wf };
		});
}

module.exports = {
	ROOT,
	FETCH_BAD_PORTS,
	CACHE,
	PACKAGE_NAME,
	NODE_TYPES,
	CREDENTIAL_TYPE,
	VERSIONS,
	versionInfo,
	isInstalled,
	ensureInstalled,
	buildPackage,
	packPackage,
	buildAndPack,
	installPackageInto,
	reservePort,
	portIsFree,
	sleep,
	n8nId,
	N8nInstance,
	parseExecuteOutput,
	documentWorkflowCredential,
	loadExamples,
	wireExample,
	log,
};
