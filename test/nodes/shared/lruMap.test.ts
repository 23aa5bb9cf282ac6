/** The bounded map every process-wide cache uses: least recently used let go first, entries in use never. */
import { LruMap } from '../../../nodes/shared/lruMap';

describe('LruMap', () => {
	test('lets go of the least recently used entry, not the oldest created', () => {
		const map = new LruMap<string, number>(2);
		map.set('a', 1);
		map.set('b', 2);
		expect(map.get('a')).toBe(1); // a is now the most recently used
		map.set('c', 3);
		expect([...map.values()]).toEqual([1, 3]);
		expect(map.get('b')).toBeUndefined();
	});

	test('getOrCreate creates once and counts as a use', () => {
		const map = new LruMap<string, { n: number }>(2);
		let made = 0;
		const create = () => ({ n: ++made });
		const a = map.getOrCreate('a', create);
		map.getOrCreate('b', create);
		expect(map.getOrCreate('a', create)).toBe(a);
		map.getOrCreate('c', create);
		expect(made).toBe(3);
		expect(map.get('b')).toBeUndefined();
		expect(map.get('a')).toBe(a);
	});

	test('never lets go of an entry in use: the map stays over capacity until it is not', () => {
		const busy = new Set<string>(['a', 'b']);
		const map = new LruMap<string, string>(1, (value) => busy.has(value));
		map.set('a', 'a');
		map.set('b', 'b');
		expect(map.size).toBe(2);
		busy.clear();
		map.set('c', 'c');
		expect([...map.values()]).toEqual(['c']);
	});
});
