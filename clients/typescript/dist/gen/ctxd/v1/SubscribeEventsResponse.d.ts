import type { Event as _ctxd_v1_Event, Event__Output as _ctxd_v1_Event__Output } from '../../ctxd/v1/Event.js';
import type { Heartbeat as _ctxd_v1_Heartbeat, Heartbeat__Output as _ctxd_v1_Heartbeat__Output } from '../../ctxd/v1/Heartbeat.js';
export interface SubscribeEventsResponse {
    'event'?: (_ctxd_v1_Event | null);
    'heartbeat'?: (_ctxd_v1_Heartbeat | null);
    'item'?: "event" | "heartbeat";
}
export interface SubscribeEventsResponse__Output {
    'event'?: (_ctxd_v1_Event__Output | null);
    'heartbeat'?: (_ctxd_v1_Heartbeat__Output | null);
    'item'?: "event" | "heartbeat";
}
