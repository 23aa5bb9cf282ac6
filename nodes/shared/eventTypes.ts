/** The API's event types, as the nodes offer them (the trigger's `events`, the Event → Get Many filter). */
export const EVENT_TYPE_OPTIONS = [
	{ name: 'Document Received', value: 'document.received' },
	{ name: 'Review Completed', value: 'review.completed' },
	{ name: 'Review Created', value: 'review.created' },
	{ name: 'Run Cancelled', value: 'run.cancelled' },
	{ name: 'Run Completed', value: 'run.completed' },
	{ name: 'Run Failed', value: 'run.failed' },
];

export const EVENT_TYPES = EVENT_TYPE_OPTIONS.map((option) => option.value);
