export interface SessionDeleted {
}
export interface SessionDeleted__Output {
}
