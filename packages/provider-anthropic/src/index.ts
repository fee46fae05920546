export { type AnthropicProviderOptions, anthropicProvider } from "./anthropic-provider.js";
