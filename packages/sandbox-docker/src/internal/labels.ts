/** Label on every container this backend creates. */
export const LABEL_SANDBOX = "dev.openrath.sandbox";
/** Label holding the pid of the process that created the container. */
export const LABEL_OWNER_PID = "dev.openrath.owner-pid";
/** Label holding the host name of that process, so orphan checks only judge local pids. */
export const LABEL_OWNER_HOST = "dev.openrath.owner-host";
/** Label holding the creation time (ISO 8601). */
export const LABEL_CREATED = "dev.openrath.created";
/** Prefix of the labels above; user labels may not use it. */
export const RESERVED_LABEL_PREFIX = "dev.openrath.";
