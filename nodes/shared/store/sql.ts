/**
 * Every statement the package runs, by concern in sql/ (node code imports from those files); this
 * module gathers them for the planner, the tests and the benchmarks. Identifiers come only from a
 * validated TableRef; every value is a bind parameter.
 */
export { LOCK_WAIT_MS } from '../transport/lockWait';
export * from './sql/schema';
export * from './sql/lockBound';
export * from './sql/reserve';
export * from './sql/ownedKeys';
export * from './sql/keySelection';
export * from './sql/operators';
export * from './sql/steps';
export * from './sql/redrive';
export * from './sql/leases';
