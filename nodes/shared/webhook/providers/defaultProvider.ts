/**
 * The provider a new Verify Webhook Signature node, the key planner's signature debugger and its
 * built-in workflow start on: Stripe, the design note's sender, first in the table. The one place
 * this default is written; a unit test keeps it a verifiable provider of the table.
 */
export const DEFAULT_PROVIDER = 'stripe';
