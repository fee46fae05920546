export { type OpenAIProviderOptions, openaiProvider } from "./openai-provider.js";
