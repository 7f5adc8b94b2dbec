/**
 * Where a request stands against the policy thresholds.
 */
export declare const BudgetStatus: {
    readonly BUDGET_STATUS_UNSPECIFIED: 'BUDGET_STATUS_UNSPECIFIED';
    /**
     * Below every threshold.
     */
    readonly BUDGET_STATUS_OK: 'BUDGET_STATUS_OK';
    /**
     * Past the clearing or summarize threshold, still within the hard limit.
     */
    readonly BUDGET_STATUS_WARN: 'BUDGET_STATUS_WARN';
    /**
     * Prompt plus output reserve exceed the hard limit: sent as is, it would not fit.
     */
    readonly BUDGET_STATUS_OVER: 'BUDGET_STATUS_OVER';
};
/**
 * Where a request stands against the policy thresholds.
 */
export type BudgetStatus = 'BUDGET_STATUS_UNSPECIFIED' | 0
/**
 * Below every threshold.
 */
 | 'BUDGET_STATUS_OK' | 1
/**
 * Past the clearing or summarize threshold, still within the hard limit.
 */
 | 'BUDGET_STATUS_WARN' | 2
/**
 * Prompt plus output reserve exceed the hard limit: sent as is, it would not fit.
 */
 | 'BUDGET_STATUS_OVER' | 3;
/**
 * Where a request stands against the policy thresholds.
 */
export type BudgetStatus__Output = typeof BudgetStatus[keyof typeof BudgetStatus];
