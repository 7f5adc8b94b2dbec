/**
 * Where a request stands against the policy thresholds.
 */
export const BudgetStatus = {
    BUDGET_STATUS_UNSPECIFIED: 'BUDGET_STATUS_UNSPECIFIED',
    /**
     * Below every threshold.
     */
    BUDGET_STATUS_OK: 'BUDGET_STATUS_OK',
    /**
     * Past the clearing or summarize threshold, still within the hard limit.
     */
    BUDGET_STATUS_WARN: 'BUDGET_STATUS_WARN',
    /**
     * Prompt plus output reserve exceed the hard limit: sent as is, it would not fit.
     */
    BUDGET_STATUS_OVER: 'BUDGET_STATUS_OVER',
};
