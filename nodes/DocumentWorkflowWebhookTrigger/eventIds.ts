/**
 * Event ids as the webhook trigger reads them: the id just below a delivered one, so that the
 * event list read `after` it starts exactly at the delivered event.
 */

const HEX_DIGITS = 32;

/**
 * The largest id smaller than `id` (the 128 bits less one), in the API's lower-case UUID form;
 * undefined for the all-zero id, which has none (the list is then read from its start).
 * `after` returns only events whose id is greater, so `after: idJustBelow(id)` lists `id`
 * first if it is listed, and nothing older.
 */
export function idJustBelow(id: string): string | undefined {
	const hex = id.replace(/-/g, '').toLowerCase();
	const value = BigInt(`0x${hex}`);
	if (value === 0n) return undefined;
	const below = (value - 1n).toString(16).padStart(HEX_DIGITS, '0');
	return `${below.slice(0, 8)}-${below.slice(8, 12)}-${below.slice(12, 16)}-${below.slice(16, 20)}-${below.slice(20)}`;
}
