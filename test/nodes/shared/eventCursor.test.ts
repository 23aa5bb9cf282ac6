/**
 * The cursor's pure rules on plain data (`nodes/shared/eventCursor.ts`): where `after` may move,
 * what two copies make together, and which stored copy a trigger takes (n8n's renames, copied
 * workflows, durable commits that never landed). The reads are tested through n8n-core elsewhere.
 */
import type { IDataObject } from 'n8n-workflow';

import type { EventCursor } from '../../../nodes/shared/eventCursor';
import {
	COPIES_KEY,
	CURSOR_KEY,
	isDone,
	loadCursor,
	mergeCursors,
	moveAfter,
	oldestKnownMs,
	startingAfter,
	storeCursor,
} from '../../../nodes/shared/eventCursor';

const MINUTE = 60_000;
/** Ids in the API's order: `id(3)` < `id(10)`. */
const id = (n: number) => `01a20000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const event = (n: number, createdOnMs: number): IDataObject => ({
	id: id(n),
	createdOn: new Date(createdOnMs).toISOString(),
});

describe('moveAfter: after moves only over what was read in one go, to events older than the overlap window', () => {
	const T = Date.parse('2026-11-20T10:00:00Z');
	const cursor = startingAfter(event(1, T), [
		event(2, T + 1 * MINUTE),
		event(3, T + 2 * MINUTE),
		event(4, T + 8 * MINUTE),
	]);

	test('to the newest listed event created before the read began less the overlap', () => {
		const moved = moveAfter(cursor, null, T + 10 * MINUTE - 5 * MINUTE);
		expect(moved.after).toBe(id(3));
		expect(moved.afterCreatedOnMs).toBe(T + 2 * MINUTE);
		expect(Object.keys(moved.listed)).toEqual([id(4)]);
	});

	test('never past the end of the stretch read in one go', () => {
		expect(moveAfter(cursor, id(2), T + 10 * MINUTE - 5 * MINUTE).after).toBe(id(2));
	});

	test('nowhere while everything listed is younger than the window, or when the read time is unknown', () => {
		expect(moveAfter(cursor, null, T + 4 * MINUTE - 5 * MINUTE)).toBe(cursor);
		expect(moveAfter(cursor, null, NaN)).toBe(cursor);
	});

	test('an event without a readable createdOn is never where after stops, but after can pass it', () => {
		const unknown = { ...startingAfter(null), listed: { [id(2)]: null, [id(3)]: T } };
		const moved = moveAfter(unknown, null, T + 10 * MINUTE - 5 * MINUTE);
		expect(moved.after).toBe(id(3));
		expect(moved.listed).toEqual({});
	});
});

test('done: at or below after, or listed', () => {
	const cursor = { after: id(5), afterCreatedOnMs: 0, listed: { [id(8)]: 1 } };
	expect([3, 5, 6, 8, 9].map((n) => isDone(cursor, id(n)))).toEqual([
		true,
		true,
		false,
		true,
		false,
	]);
});

test('oldestKnownMs: after, else the lowest id listed (ids reflect creation), else NaN', () => {
	expect(oldestKnownMs({ after: id(1), afterCreatedOnMs: 7, listed: { [id(2)]: 9 } })).toBe(7);
	expect(
		oldestKnownMs({ after: null, afterCreatedOnMs: null, listed: { c: 9, a: 4, b: null } }),
	).toBe(4);
	expect(oldestKnownMs(startingAfter(null))).toBeNaN();
});

test("mergeCursors: the one further ahead, with the other one's listed events it has not passed", () => {
	const ahead: EventCursor = { after: id(10), afterCreatedOnMs: 10, listed: { [id(12)]: 12 } };
	const behind: EventCursor = {
		after: id(4),
		afterCreatedOnMs: 4,
		listed: { [id(6)]: 6, [id(11)]: 11, [id(13)]: 13 },
	};
	const merged = {
		after: id(10),
		afterCreatedOnMs: 10,
		listed: { [id(11)]: 11, [id(12)]: 12, [id(13)]: 13 },
	};
	expect(mergeCursors(ahead, behind)).toEqual(merged);
	expect(mergeCursors(behind, ahead)).toEqual(merged);
});

/** A trigger node's static data as n8n hands it out: under the node's name, and the workflow's. */
type CursorContext = Parameters<typeof loadCursor>[0];

class StaticData {
	data: Record<string, IDataObject> = { global: {} };
	context(node: { id: string; name: string }, workflowId = 'wf-1'): CursorContext {
		return {
			getNode: () => ({ ...node, type: 't', typeVersion: 1, position: [0, 0], parameters: {} }),
			getWorkflow: () => ({ id: workflowId, name: 'w', active: true }),
			getWorkflowStaticData: (type: string) =>
				type === 'node' ? (this.data[`node:${node.name}`] ??= {}) : this.data.global,
		};
	}
}

describe('which stored cursor a trigger takes', () => {
	const A = { id: 'node-1', name: 'A' };
	const cursorAt = (n: number): EventCursor => ({ after: id(n), afterCreatedOnMs: n, listed: {} });
	const save = (store: StaticData, node = A, n = 1, workflowId = 'wf-1') =>
		storeCursor(
			store.context(node, workflowId),
			cursorAt(n),
			loadCursor(store.context(node, workflowId)),
		);

	test("its own, under its name, with a copy by node id in the workflow's static data", () => {
		const store = new StaticData();
		save(store, A, 3);
		expect(loadCursor(store.context(A))?.after).toBe(id(3));
		expect(store.data.global[COPIES_KEY]).toEqual({ [A.id]: store.data['node:A'][CURSOR_KEY] });
	});

	test('renamed (n8n keeps static data under the old name): the copy by node id', () => {
		const store = new StaticData();
		save(store, A, 3);
		expect(loadCursor(store.context({ ...A, name: 'B' }))?.after).toBe(id(3));
	});

	test('renamed back to a name whose older cursor n8n still keeps: the copy saved under the other name since', () => {
		const store = new StaticData();
		save(store, A, 3);
		save(store, { ...A, name: 'B' }, 7);
		expect(loadCursor(store.context(A))?.after).toBe(id(7));
	});

	test('durable poll cursors: a copy saved ahead of a commit that never landed is not taken', () => {
		const store = new StaticData();
		save(store, A, 3);
		// n8n saved the workflow's static data at emit; the node's cursor, committed with the
		// execution under a fence, was not (the lease was lost, or n8n crashed).
		const committed = JSON.parse(JSON.stringify(store.data['node:A']));
		save(store, A, 9);
		store.data['node:A'] = committed;
		expect(loadCursor(store.context(A))?.after).toBe(id(3));
	});

	test("another node's cursor under the same name (a deleted trigger), or a copied workflow's, is not taken", () => {
		const store = new StaticData();
		save(store, A, 3);
		expect(loadCursor(store.context({ id: 'node-2', name: 'A' }))).toBeUndefined();
		expect(loadCursor(store.context(A, 'wf-copy'))).toBeUndefined();
	});

	test('a cursor saved by version 0.1 (format 1) is taken over: its after, and the ids it emitted since are done', () => {
		const store = new StaticData();
		store.data['node:A'] = {
			[CURSOR_KEY]: { v: 1, owner: A.id, after: id(3), afterCreatedOnMs: 3, seen: { [id(5)]: 5 } },
		};
		const taken = loadCursor(store.context(A))!;
		expect([taken.after, Object.keys(taken.listed)]).toEqual([id(3), [id(5)]]);
		expect([3, 4, 5].map((n) => isDone(taken, id(n)))).toEqual([true, false, true]);
		// Another node's format-1 cursor under this name is not taken either.
		expect(loadCursor(store.context({ id: 'node-2', name: 'A' }))).toBeUndefined();
	});

	test('the copies are bounded: the ten triggers saved last keep theirs', () => {
		const store = new StaticData();
		for (let n = 0; n < 25; n++) save(store, { id: `node-${n}`, name: `T${n}` }, n);
		const copies = Object.keys(store.data.global[COPIES_KEY] as IDataObject);
		expect(copies).toHaveLength(10);
		expect(copies).toContain('node-24');
		expect(copies).not.toContain('node-14');
	});
});
