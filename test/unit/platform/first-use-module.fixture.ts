// A tiny module for the load-on-first-use test: it counts how often it is evaluated, so the test
// sees that nothing loads it before the first call.
const counter = globalThis as { firstUseModuleEvaluations?: number };
counter.firstUseModuleEvaluations = (counter.firstUseModuleEvaluations ?? 0) + 1;

export const greeting = 'loaded';
