/**
 * Runs `work` for every index with at most `limit` running at once and returns the results
 * in index order (a failure as `{ error }` in its slot). With `stopOnError`, no new work
 * starts after a failure (later slots stay undefined) and `firstError` names it; the
 * function still returns only after the work already started has ended.
 */
export async function mapWithConcurrency<T>(
	count: number,
	limit: number,
	work: (index: number) => Promise<T>,
	stopOnError: boolean,
): Promise<{
	results: Array<{ value: T } | { error: unknown } | undefined>;
	firstError?: { index: number; error: unknown };
}> {
	const results = new Array<{ value: T } | { error: unknown } | undefined>(count).fill(undefined);
	let next = 0;
	let stopped = false;
	let firstError: { index: number; error: unknown } | undefined;
	const worker = async () => {
		while (!stopped && next < count) {
			const index = next++;
			try {
				results[index] = { value: await work(index) };
			} catch (error) {
				results[index] = { error };
				if (stopOnError && !firstError) {
					firstError = { index, error };
					stopped = true;
				}
			}
		}
	};
	const workers = Array.from(
		{ length: Math.max(1, Math.min(Math.floor(limit), count)) },
		async () => await worker(),
	);
	await Promise.all(workers);
	return { results, firstError };
}
