/** Where waiting's reads of the event list start and which pages they read (listWindow.ts), pure. */
import {
	LOOKBACK_MS,
	firstListPage,
	newListWindow,
	nextListPage,
	takeListRead,
} from '../../../../nodes/DocumentWorkflow/waiting/listWindow';

const T0 = Date.parse('2026-11-29T10:00:00Z');
const hex = (n: number) => `00000000-0000-1000-8000-${n.toString(16).padStart(12, '0')}`;
/** Event n's id; a late event may take an odd one between two (ids reflect creation time). */
const id = (n: number) => hex(2 * n);
/** Event n, created n seconds after T0. */
const event = (n: number) => ({
	id: id(n),
	type: 'run.completed',
	createdOn: new Date(T0 + n * 1000).toISOString(),
});
const events = (from: number, to: number) =>
	Array.from({ length: to - from + 1 }, (_, i) => event(from + i));

describe('the list window', () => {
	it('the first read only finds where the list ends: page 1, then the last; nothing is news', () => {
		const window = newListWindow();
		expect(firstListPage(window)).toBe(1);
		expect(nextListPage(window, 1, 1, { count: 250, pages: 3 }, [])).toBe(3);
		expect(nextListPage(window, 1, 3, { count: 250, pages: 3 }, [])).toBeUndefined();
		// Page 1 (events 1–100) and page 3 (201–250): reads start after 201, 202–250 are seen.
		expect(takeListRead(window, [...events(1, 100), ...events(201, 250)])).toEqual([]);
		expect(window.after).toBe(id(201));
		expect(window.seen.size).toBe(49);
	});

	it('later reads return only events not seen, and start LOOKBACK_MS before the newest seen', () => {
		const window = newListWindow();
		takeListRead(window, events(1, 10));
		expect(takeListRead(window, events(2, 12)).map((e) => e.id)).toEqual([id(11), id(12)]);
		const last = LOOKBACK_MS / 1000 + 20;
		takeListRead(window, [...events(2, 12), event(last)]);
		// Every event created more than LOOKBACK_MS before the newest is passed.
		expect(window.after).toBe(id(12));
		expect([...window.seen.keys()]).toEqual([id(last)]);
	});

	it('a late event under ids seen is news, and the pages before the first are read back while the list counts more than the ids seen', () => {
		const window = newListWindow();
		takeListRead(window, events(0, 0));
		takeListRead(window, events(1, 250));
		expect(window.seen.size).toBe(250);
		// Nothing entered: the third page (ids 201–250 and new ones) is the only one read.
		const first = firstListPage(window);
		expect(first).toBe(3);
		const quiet = events(201, 260);
		expect(nextListPage(window, first, 3, { count: 260, pages: 3 }, quiet)).toBeUndefined();
		// One event entered late among 1–250: the count says so, so pages 2 and 1 are read.
		const shifted = { count: 261, pages: 3 };
		expect(nextListPage(window, first, 3, shifted, quiet)).toBe(2);
		expect(nextListPage(window, first, 2, shifted, quiet)).toBe(1);
		const lateEvent = { ...event(150), id: hex(2 * 150 + 1) };
		expect(nextListPage(window, first, 1, shifted, [...quiet, lateEvent])).toBeUndefined();
		expect(takeListRead(window, [...quiet, lateEvent]).map((e) => e.id)).toContain(lateEvent.id);
	});
});
