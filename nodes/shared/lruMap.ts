/**
 * A bounded map for state kept across executions in one n8n process (per API key, per
 * trigger): at most `capacity` entries, letting go of the least recently used first. An entry
 * still in use (`inUse`) is never let go; the map then stays over its capacity until it is not.
 */
export class LruMap<K, V> {
	private readonly entries = new Map<K, V>();

	constructor(
		readonly capacity: number,
		private readonly inUse: (value: V) => boolean = () => false,
	) {}

	get size(): number {
		return this.entries.size;
	}

	/** The value, now the most recently used. */
	get(key: K): V | undefined {
		const value = this.entries.get(key);
		if (value !== undefined) this.touch(key, value);
		return value;
	}

	/** The value, made with `create` when absent; either way the most recently used. */
	getOrCreate(key: K, create: () => V): V {
		const value = this.get(key);
		if (value !== undefined) return value;
		const made = create();
		this.set(key, made);
		return made;
	}

	set(key: K, value: V): void {
		this.touch(key, value);
		for (const [oldKey, oldValue] of this.entries) {
			if (this.entries.size <= this.capacity) break;
			if (oldKey !== key && !this.inUse(oldValue)) this.entries.delete(oldKey);
		}
	}

	delete(key: K): boolean {
		return this.entries.delete(key);
	}

	/** The values, least recently used first (reading them uses none). */
	values(): IterableIterator<V> {
		return this.entries.values();
	}

	clear(): void {
		this.entries.clear();
	}

	private touch(key: K, value: V): void {
		this.entries.delete(key);
		this.entries.set(key, value);
	}
}
