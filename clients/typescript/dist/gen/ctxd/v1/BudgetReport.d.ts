import type { BudgetBreakdown as _ctxd_v1_BudgetBreakdown, BudgetBreakdown__Output as _ctxd_v1_BudgetBreakdown__Output } from '../../ctxd/v1/BudgetBreakdown.js';
import type { BudgetStatus as _ctxd_v1_BudgetStatus, BudgetStatus__Output as _ctxd_v1_BudgetStatus__Output } from '../../ctxd/v1/BudgetStatus.js';
import type { RecommendedAction as _ctxd_v1_RecommendedAction, RecommendedAction__Output as _ctxd_v1_RecommendedAction__Output } from '../../ctxd/v1/RecommendedAction.js';
/**
 * The budget of a request and its verdict.
 */
export interface BudgetReport {
    'breakdown'?: (_ctxd_v1_BudgetBreakdown | null);
    'status'?: (_ctxd_v1_BudgetStatus);
    'recommendedAction'?: (_ctxd_v1_RecommendedAction);
    /**
     * total / context_window.
     */
    'windowFraction'?: (number | string);
}
/**
 * The budget of a request and its verdict.
 */
export interface BudgetReport__Output {
    'breakdown': (_ctxd_v1_BudgetBreakdown__Output | null);
    'status': (_ctxd_v1_BudgetStatus__Output);
    'recommendedAction': (_ctxd_v1_RecommendedAction__Output);
    /**
     * total / context_window.
     */
    'windowFraction': (number);
}
