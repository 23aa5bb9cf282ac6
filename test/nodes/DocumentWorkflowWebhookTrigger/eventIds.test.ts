/** The id the trigger reads after: the largest id below a delivered one, so the list starts at that event. */
import { idJustBelow } from '../../../nodes/DocumentWorkflowWebhookTrigger/eventIds';

describe('idJustBelow', () => {
	test('is one less, carrying across digits and groups', () => {
		expect(idJustBelow('0192f0a1-7c3e-7001-8000-000000000001')).toBe(
			'0192f0a1-7c3e-7001-8000-000000000000',
		);
		expect(idJustBelow('0192f0a1-7c3e-7001-8000-000000000000')).toBe(
			'0192f0a1-7c3e-7001-7fff-ffffffffffff',
		);
		expect(idJustBelow('00000001-0000-0000-0000-000000000000')).toBe(
			'00000000-ffff-ffff-ffff-ffffffffffff',
		);
		expect(idJustBelow('0192F0A1-7C3E-7001-8000-00000000000A')).toBe(
			'0192f0a1-7c3e-7001-8000-000000000009',
		);
	});

	test('nothing is below the all-zero id', () => {
		expect(idJustBelow('00000000-0000-0000-0000-000000000000')).toBeUndefined();
	});

	test('is below the id and above every smaller id (string order, as the API compares)', () => {
		const id = '0192f0a1-7c3e-7abc-8def-0123456789ab';
		const below = idJustBelow(id)!;
		expect(below < id).toBe(true);
		expect('0192f0a1-7c3e-7abc-8def-0123456789aa' <= below).toBe(true);
	});
});
