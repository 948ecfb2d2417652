import type { LanguageModel } from 'ai';
import { scriptedSupportModel } from './scripted-model.js';

// Which model the worker calls: the offline script by default, or any OpenAI-compatible endpoint
// (OpenAI, a local Ollama or vLLM, a gateway) when the environment names one:
//
//   AGENT_PROVIDER_URL   its base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1
//   AGENT_PROVIDER_KEY   its API key (sent as a bearer token; some local servers need none)
//   AGENT_MODEL          the model id (default gpt-4o-mini)
//   SCRIPTED_WORD_MS     without a provider: milliseconds between the script's words (default 60)

/** The model the environment asks for, and a name for it in the logs. */
export async function modelFromEnv(env: NodeJS.ProcessEnv): Promise<{ model: LanguageModel; name: string }> {
  const baseURL = env['AGENT_PROVIDER_URL'];
  if (!baseURL) {
    const wordMs = Number(env['SCRIPTED_WORD_MS'] ?? 60);
    return { model: scriptedSupportModel({ wordMs }), name: 'scripted' };
  }
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  const provider = createOpenAICompatible({
    name: 'provider',
    baseURL,
    ...(env['AGENT_PROVIDER_KEY'] ? { apiKey: env['AGENT_PROVIDER_KEY'] } : {}),
  });
  const id = env['AGENT_MODEL'] || 'gpt-4o-mini';
  return { model: provider.chatModel(id), name: `${baseURL} ${id}` };
}
