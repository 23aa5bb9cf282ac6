'use strict';
/**
 * The queue-mode row under one read limit, as both its real run (queue-limited.js) and its model
 * (bench/queue-model.bench.ts) take it: one place for its shape and its bounds.
 */
module.exports = {
	EXECUTIONS: 200,
	RUN_MS: 5000,
	READ_LIMIT: 50,
	ARRIVAL_GAP_MS: 25,
	MAX_429_SHARE: 0.005,
	/** Fair shares: each worker's worst output lateness within this factor of the other's, or within FAIR_SLACK_MS of it. */
	FAIR_FACTOR: 1.5,
	FAIR_SLACK_MS: 2000,
};
