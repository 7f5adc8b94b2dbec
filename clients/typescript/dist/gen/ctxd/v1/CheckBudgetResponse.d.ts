import type { BudgetReport as _ctxd_v1_BudgetReport, BudgetReport__Output as _ctxd_v1_BudgetReport__Output } from '../../ctxd/v1/BudgetReport.js';
export interface CheckBudgetResponse {
    'budget'?: (_ctxd_v1_BudgetReport | null);
}
export interface CheckBudgetResponse__Output {
    'budget': (_ctxd_v1_BudgetReport__Output | null);
}
