/**
 * The planner's logic now lives in one file per concern: settings.ts, requestHeaders.ts,
 * requestBody.ts, readParameter.ts, keyPlan.ts (with keyExplain.ts and fingerprintPlan.ts),
 * sqlPlan.ts and configureWorkflow.ts. This re-export remains only because signature.ts, being
 * rewritten elsewhere, still imports parseHeaders from here; import requestHeaders.ts instead.
 */
export { parseHeaders, type ParsedHeaders } from './requestHeaders';
