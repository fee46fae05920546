export { type ServiceCheck, serviceAvailable } from "./service.js";
