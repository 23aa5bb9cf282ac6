/**
 * The shared read below the triggers (`nodes/shared/cursorRead.ts`), through n8n-core's request
 * helpers against the sandbox: where a trigger starts when the list changes between two requests,
 * a page past the end, and what finding a late event costs. The triggers' own files test the
 * same code from `poll()` and `webhook()`.
 */
import type { EventCursor } from '../../../nodes/shared/eventCursor';
import { moveAfter, startingAfter } from '../../../nodes/shared/eventCursor';
import type { PageReader } from '../../../nodes/shared/cursorRead';
import { anchorAtNewest, readEvents, startBefore } from '../../../nodes/shared/cursorRead';
import { readEventPage } from '../../../nodes/shared/eventList';
import { triggerContext } from '../../harness/n8n';
import { DAY, MINUTE, spreadEvents } from '../../harness/triggerHost';
import { useSandbox } from '../../harness/sandbox';

const env = useSandbox();

/** Pages through n8n's request helpers; `between` runs after the first request (the list changing under a read). */
function pages(between?: () => Promise<void>): PageReader & { requests: number } {
	const ctx = triggerContext(env.credentials);
	const reader = async (query: Parameters<PageReader>[0]) => {
		const page = await readEventPage(ctx, query);
		if (reader.requests++ === 0) await between?.();
		return page;
	};
	reader.requests = 0;
	return reader;
}

const options = { filter: {}, overlapMs: 5 * MINUTE, maxEvents: 10_000, until: Infinity };

describe('where a trigger starts, when events leave the 7 days between its first and last request', () => {
	// 250 events about to leave the 7 days, then 60 recent ones: 4 pages, then 1 once the clock moves on.
	const history = async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(
			spreadEvents(250, now - 7 * DAY + 5000, now - 7 * DAY + 60_000),
		);
		await env.sandbox.control.createEvents(spreadEvents(60, now - 10 * MINUTE, now - 1000));
	};
	const expire = async () => void (await env.sandbox.control.advanceClock(2 * MINUTE));

	test('Start From Now: at the newest event still listed, not at the start of the list (so nothing old comes out)', async () => {
		await history();
		const cursor = await anchorAtNewest(pages(expire), options);
		expect(cursor.after).not.toBeNull();
		const read = await readEvents(pages(), cursor, { ...options, recheck: true });
		expect(read.events).toEqual([]);
	});

	test('Start From Now over a burst inside the overlap window larger than Max Events per Poll: everything listed at activation is done', async () => {
		const now = (await env.sandbox.control.getClock()).nowMs;
		await env.sandbox.control.createEvents(spreadEvents(50, now - 30 * MINUTE, now - 20 * MINUTE));
		await env.sandbox.control.createEvents(spreadEvents(250, now - MINUTE, now - 1000));
		const fewPerPoll = { ...options, maxEvents: 10 };
		const cursor = await anchorAtNewest(pages(), fewPerPoll);
		const read = await readEvents(pages(), cursor, { ...fewPerPoll, recheck: true });
		expect(read.events).toEqual([]);
	});

	test('a look-back start: at the newest event created before it, not at the start of the list', async () => {
		await history();
		const cursor = await startBefore(pages(expire), 5 * MINUTE);
		const read = await readEvents(pages(), cursor, { ...options, recheck: true });
		const listed = await env.sandbox.control.listEvents();
		const lookBackStart = (await env.sandbox.control.getClock()).nowMs - 5 * MINUTE;
		// Only the recent events created within the look-back (a second's rounding of the API's clock aside).
		const recent = listed.filter((event) => Date.parse(event.createdOn) >= lookBackStart - 1000);
		expect(read.events.map((event) => event.id)).toEqual(
			expect.arrayContaining(
				recent.filter((e) => Date.parse(e.createdOn) >= lookBackStart + 1000).map((e) => e.id),
			),
		);
		expect(read.events.length).toBeLessThanOrEqual(recent.length);
	});
});

test('a page past the end of the list, refused (400), means the list is not what the cursor counted: the read goes on from after, it does not fail', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	const { ids } = await env.sandbox.control.createEvents(
		spreadEvents(30, now - 20_000, now - 1000),
		{
			returnIds: true,
		},
	);
	// 150 listed ids that the API has never listed (a cursor from another list).
	const stale: EventCursor = startingAfter(null);
	for (let n = 0; n < 150; n++)
		stale.listed[`01a10000-0000-7000-8000-${String(n).padStart(12, '0')}`] = now;
	const read = await readEvents(pages(), stale, { ...options, recheck: true });
	expect(read.failure).toBeUndefined();
	expect(read.events.map((event) => event.id)).toEqual(ids);
});

test('a late event among 1,000 events read before is found by counting and a binary search, not by reading them all again', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	await env.sandbox.control.createEvents(spreadEvents(1000, now - 60_000, now - 2000));
	let cursor = startingAfter(null);
	const first = await readEvents(pages(), cursor, { ...options, recheck: true });
	expect(first.events).toHaveLength(1000);
	cursor = moveAfter(first.cursor, null, now - 61_000 - 5 * MINUTE); // nothing moves: all young
	const [late] = (
		await env.sandbox.control.createEvents(
			[{ type: 'run.failed', createdOn: new Date(now - 30_000).toISOString() }],
			{ returnIds: true },
		)
	).ids!;
	const reader = pages();
	const second = await readEvents(reader, cursor, { ...options, recheck: true });
	expect(second.events.map((event) => event.id)).toEqual([late]);
	// The last page, the new events, about log2(10) pages of the search, then the half read again.
	expect(reader.requests).toBeLessThanOrEqual(1 + 1 + 4 + 6);
	const quiet = pages();
	expect((await readEvents(quiet, second.cursor, { ...options, recheck: true })).events).toEqual(
		[],
	);
	expect(quiet.requests).toBe(1);
});

/** `count` events of the last minute, after every event the file's other tests made, read once:
 * the cursor knows them all. */
async function knownRecently(count: number) {
	await env.sandbox.control.advanceClock(10 * MINUTE);
	const before = (await env.sandbox.control.listEvents()).sort((a, b) => (a.id < b.id ? -1 : 1));
	const newestBefore = before.at(-1);
	const start = startingAfter(
		newestBefore ? { id: newestBefore.id, createdOn: newestBefore.createdOn } : null,
	);
	const now = (await env.sandbox.control.getClock()).nowMs;
	await env.sandbox.control.createEvents(spreadEvents(count, now - 60_000, now - 2000));
	const first = await readEvents(pages(), start, { ...options, recheck: true });
	expect(first.events).toHaveLength(count);
	return { now, first };
}

test('a look back whose read over ids older than the window reaches the end of the list asks past the newest id no more: it has read all that follows', async () => {
	const { now, first } = await knownRecently(250);
	// The 250 are older than the overlap window now, and a late event entered below them.
	await env.sandbox.control.advanceClock(6 * MINUTE);
	const [late] = (
		await env.sandbox.control.createEvents(
			[{ type: 'run.failed', createdOn: new Date(now - 61_000).toISOString() }],
			{ returnIds: true },
		)
	).ids!;
	const reader = pages();
	const second = await readEvents(reader, first.cursor, { ...options, recheck: true });
	expect(second.events.map((event) => event.id)).toEqual([late]);
	expect(second.complete).toBe(true);
	// The last page (moved), the search down to page 1 (kept), the pages after it to the end: no more.
	expect(reader.requests).toBe(5);
});

test.each([
	['first', 60_500],
	['second', 59_900],
])(
	'a look back that finds a late event %s among two pages of known ids reads on from there to the end, which lists the new events too: they are not asked for apart',
	async (_, lateByMs) => {
		const { now, first } = await knownRecently(200);
		// A late event entered among the first of the 200 (all within the overlap window), and a new one.
		const late = [{ type: 'run.failed', createdOn: new Date(now - lateByMs).toISOString() }];
		const fresh = [{ type: 'run.completed', createdOn: new Date(now - 1000).toISOString() }];
		const { ids } = await env.sandbox.control.createEvents([...late, ...fresh], {
			returnIds: true,
		});
		const reader = pages();
		const second = await readEvents(reader, first.cursor, { ...options, recheck: true });
		expect(second.events.map((event) => event.id)).toEqual(ids);
		expect(second.complete).toBe(true);
		// The last page (moved), the search down to page 1 (kept), the two pages after it to the end.
		// A fifth, past the newest id, took the read over 10 s at 2 s a request (MODEL_SEED=-485299197).
		expect(reader.requests).toBe(4);
	},
);

test('Max Events counts only events not done: going over the events read before (fewer than a page) leaves room for new ones, so a capped read still emits the newest', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	// After every event the file's other tests made.
	const before = (await env.sandbox.control.listEvents()).sort((a, b) => (a.id < b.id ? -1 : 1));
	await env.sandbox.control.createEvents(spreadEvents(8, now - 60_000, now - 30_000));
	const capped = { ...options, maxEvents: 3, recheck: true };
	// Three reads of three take the 8 events in order, each once.
	let cursor: EventCursor = startingAfter(
		before.length
			? { id: before[before.length - 1].id, createdOn: before[before.length - 1].createdOn }
			: null,
	);
	const emitted: unknown[] = [];
	for (let n = 0; n < 3; n++) {
		const read = await readEvents(pages(), cursor, capped);
		emitted.push(...read.events.map((event) => event.id));
		expect(read.events.length).toBeLessThanOrEqual(3);
		cursor = read.cursor;
	}
	expect(new Set(emitted).size).toBe(8);
	// All 8 are within the overlap window, so each read goes over them again: a new event still comes out.
	const { ids } = await env.sandbox.control.createEvents([{ type: 'run.completed' }], {
		returnIds: true,
	});
	const read = await readEvents(pages(), cursor, capped);
	expect(read.events.map((event) => event.id)).toEqual(ids);
	expect(read.complete).toBe(true);
});

test('a late event before every id listed, with nothing done yet (`after` null): found when the window has passed, not passed over', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	const before = (await env.sandbox.control.listEvents()).sort((a, b) => (a.id < b.id ? -1 : 1));
	const newest = before.at(-1);
	// 120 young events read in one go from the start: all listed, `after` stays where it was.
	await env.sandbox.control.createEvents(spreadEvents(120, now - 60_000, now - 1000));
	const start = startingAfter(newest ? { id: newest.id, createdOn: newest.createdOn } : null);
	const first = await readEvents(pages(), start, { ...options, recheck: true });
	expect(first.events).toHaveLength(120);
	expect(first.cursor.after).toBe(start.after);
	// An event created before all of them, committed only now (within the overlap window).
	const { ids } = await env.sandbox.control.createEvents(
		[{ type: 'run.failed', createdOn: new Date(now - 90_000).toISOString() }],
		{ returnIds: true },
	);
	// The window passes: the listed ids are old enough for `after` to move over them, the late one
	// entered before them all.
	await env.sandbox.control.advanceClock(10 * MINUTE);
	const second = await readEvents(pages(), first.cursor, { ...options, recheck: true });
	expect(second.events.map((event) => event.id)).toEqual(ids);
	const third = await readEvents(pages(), second.cursor, { ...options, recheck: true });
	expect(third.events).toEqual([]);
});

test('a look back cut at its time bound is carried: the next read counts from where it stopped (one request), not all again', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	const before = (await env.sandbox.control.listEvents()).sort((a, b) => (a.id < b.id ? -1 : 1));
	const newest = before.at(-1);
	const start = startingAfter(newest ? { id: newest.id, createdOn: newest.createdOn } : null);
	await env.sandbox.control.createEvents(spreadEvents(600, now - 60_000, now - 2000));
	const first = await readEvents(pages(), start, { ...options, recheck: true });
	expect(first.events).toHaveLength(600);
	// 150 late events among all six pages of known ids, at an API answering in 0.3 s: counting
	// them (the last page and a search down to page 1) and asking for new events fill a read.
	const { ids: late } = await env.sandbox.control.createEvents(
		spreadEvents(150, now - 59_500, now - 2500),
		{ returnIds: true },
	);
	await env.sandbox.control.setSettings({ eventPageLatencyMs: 300 });
	let cursor = first.cursor;
	const emitted: string[] = [];
	const counted: number[] = [];
	for (let n = 0; n < 10 && emitted.length < late!.length; n++) {
		const seq = (await env.sandbox.control.getRequests({ pathPrefix: '/events' })).at(-1)?.seq;
		const read = await readEvents(pages(), cursor, {
			...options,
			until: Date.now() + 1600,
			recheck: true,
		});
		emitted.push(...read.events.map((event) => String(event.id)));
		cursor = read.cursor;
		const asked = await env.sandbox.control.getRequests({ pathPrefix: '/events', afterSeq: seq });
		counted.push(asked.filter((request) => !/[?&]page=1(&|$)/.test(request.path)).length);
	}
	expect(emitted.sort()).toEqual([...late!].sort());
	// The first read counts (the last page, a search down to page 1); each next one asks only for
	// the page where the one before stopped (all in place up to there; none past page 1 when it
	// stopped within it) and reads on from it.
	expect(counted[0]).toBeGreaterThan(1);
	expect(counted.slice(1).filter((pages) => pages > 1)).toEqual([]);
}, 60_000);

test('a page of entries without an event id (dropped as read) is passed by position: the events after it come out', async () => {
	const now = (await env.sandbox.control.getClock()).nowMs;
	const before = (await env.sandbox.control.listEvents()).sort((a, b) => (a.id < b.id ? -1 : 1));
	const newest = before.at(-1);
	const { ids } = await env.sandbox.control.createEvents(spreadEvents(3, now - 3000, now - 1000), {
		returnIds: true,
	});
	const [first, malformed, last] = ids!;
	// The API lists the middle entry without a valid id: the reader drops it, as readEventPage does.
	const listed = pages();
	const read: PageReader = async (query) => {
		const page = await listed(query);
		return { ...page, events: page.events.filter((event) => event.id !== malformed) };
	};
	// A page of one (Max Events per Poll 1) holds only that entry.
	let cursor = startingAfter(newest ? { id: newest.id, createdOn: newest.createdOn } : null);
	const emitted: unknown[] = [];
	for (let n = 0; n < 4; n++) {
		const result = await readEvents(read, cursor, { ...options, maxEvents: 1, recheck: true });
		emitted.push(...result.events.map((event) => event.id));
		cursor = result.cursor;
	}
	expect(emitted).toEqual([first, last]);
});
