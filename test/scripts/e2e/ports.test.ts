/** The one table of n8n ports (scripts/e2e/ports.js): no two users share a port, and none is refused. */
const { PORTS, N8N_BROKER_DEFAULT_PORT } = require('../../../scripts/e2e/ports') as {
	PORTS: Record<string, number>;
	N8N_BROKER_DEFAULT_PORT: number;
};
const { FETCH_BAD_PORTS } = require('../../../scripts/e2e/n8n') as { FETCH_BAD_PORTS: Set<number> };

/** The E2E_PORT_OFFSET values in use on the shared machine (docs/development.md), 300 excepted. */
const OFFSETS = [0, 100, 200, 400, 500, 600, 700, 800, 900];

describe('the n8n port table', () => {
	test('gives every user its own port', () => {
		const byPort = new Map<number, string[]>();
		for (const [name, port] of Object.entries(PORTS))
			byPort.set(port, [...(byPort.get(port) ?? []), name]);
		expect([...byPort.values()].filter((names) => names.length > 1)).toEqual([]);
	});

	test("holds no port n8n's task broker or fetch refuses, at any offset in use", () => {
		const refused = OFFSETS.flatMap((offset) =>
			Object.entries(PORTS)
				.map(([name, port]) => ({ name, port: port + offset }))
				.filter(({ port }) => port === N8N_BROKER_DEFAULT_PORT || FETCH_BAD_PORTS.has(port)),
		);
		expect(refused).toEqual([]);
	});
});

describe('reservePort', () => {
	const script = require.resolve('../../../scripts/e2e/ports');
	const { spawn } = require('node:child_process') as typeof import('node:child_process');
	const fs = require('node:fs') as typeof import('node:fs');

	/**
	 * A process that runs `code`, which prints the ports it got and lives on until killed: all stay
	 * alive until every one has printed (a fixed hold let a slow one, on a loaded machine, reserve
	 * after another had exited and rightly take its ports again).
	 */
	const runIn = (code: string, env: NodeJS.ProcessEnv = process.env) =>
		new Promise<{ ports: number[]; child: import('node:child_process').ChildProcess }>(
			(resolve, reject) => {
				const child = spawn(process.execPath, ['-e', code], { env });
				let out = '';
				child.stdout.on('data', (chunk: Buffer) => {
					out += chunk.toString();
					if (out.endsWith('\n')) resolve({ ports: JSON.parse(out), child });
				});
				child.on('error', reject);
				child.on('exit', (code) => reject(new Error(`reserving process exited (${code})`)));
			},
		);
	const reserveIn = (count: number) =>
		runIn(`const { reservePort } = require(${JSON.stringify(script)});
			(async () => {
				const ports = [];
				for (let i = 0; i < ${count}; i++) ports.push(await reservePort());
				process.stdout.write(JSON.stringify(ports) + '\\n');
				setInterval(() => {}, 60000);
			})();`);

	const ephemeralLow = () =>
		Number(
			fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
		);

	test('hands out ports below the ephemeral range, never one that another live process holds', async () => {
		const settled = await Promise.allSettled([reserveIn(150), reserveIn(150), reserveIn(150)]);
		for (const result of settled) if (result.status === 'fulfilled') result.value.child.kill();
		const all = settled.flatMap((result) => {
			if (result.status === 'rejected') throw result.reason;
			return result.value.ports;
		});
		expect(new Set(all).size).toBe(all.length);
		expect(all.filter((port) => port < 11000 || port >= ephemeralLow())).toEqual([]);
		expect(
			all.filter((port) => port === N8N_BROKER_DEFAULT_PORT || FETCH_BAD_PORTS.has(port)),
		).toEqual([]);
	}, 30000);

	test('takes a stale reservation over in one process only, however many try it at once', async () => {
		// 3 processes claim the same 3,000 ports in the same order, each held by a process that has
		// ended: every claim is a takeover that the others attempt at about the same moment.
		const tmp = fs.mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'ports-'));
		const ended = spawn(process.execPath, ['-e', '']);
		await new Promise((resolve) => ended.on('exit', resolve));
		const reservations = `${tmp}/document-workflow-ports`;
		fs.mkdirSync(reservations);
		const ports = Array.from({ length: 3000 }, (_, i) => 20000 + i);
		for (const port of ports) fs.writeFileSync(`${reservations}/${port}`, String(ended.pid));
		const claimAll = `const { claim } = require(${JSON.stringify(script)});
			const won = ${JSON.stringify(ports)}.filter((port) => claim(port));
			process.stdout.write(JSON.stringify(won) + '\\n');
			setInterval(() => {}, 60000);`;
		const env = { ...process.env, TMPDIR: tmp };
		const settled = await Promise.allSettled([1, 2, 3].map(() => runIn(claimAll, env)));
		for (const result of settled) if (result.status === 'fulfilled') result.value.child.kill();
		fs.rmSync(tmp, { recursive: true, force: true });
		const won = settled.flatMap((result) => {
			if (result.status === 'rejected') throw result.reason;
			return result.value.ports;
		});
		expect(won.length - new Set(won).size).toBe(0); // no port claimed twice
		expect(new Set(won).size).toBe(ports.length); // and each taken over by one
	}, 30000);
});
