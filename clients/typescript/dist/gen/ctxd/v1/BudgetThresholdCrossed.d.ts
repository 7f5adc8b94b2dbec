import type { BudgetStatus as _ctxd_v1_BudgetStatus, BudgetStatus__Output as _ctxd_v1_BudgetStatus__Output } from '../../ctxd/v1/BudgetStatus.js';
import type { Long } from '@grpc/proto-loader';
export interface BudgetThresholdCrossed {
    'previousStatus'?: (_ctxd_v1_BudgetStatus);
    'status'?: (_ctxd_v1_BudgetStatus);
    /**
     * The estimate that crossed, and the window it is measured against.
     */
    'usedTokens'?: (number | string | Long);
    'contextWindow'?: (number | string | Long);
}
export interface BudgetThresholdCrossed__Output {
    'previousStatus': (_ctxd_v1_BudgetStatus__Output);
    'status': (_ctxd_v1_BudgetStatus__Output);
    /**
     * The estimate that crossed, and the window it is measured against.
     */
    'usedTokens': (number);
    'contextWindow': (number);
}
