import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// Compiles small programs against the built package, as a user's editor does, and reports the
// first line of each error: where a mistake is caught, that line should name it.

const HERE = dirname(fileURLToPath(import.meta.url));

/** The first line of every error in each program, by its name (no errors: an empty list). */
export function firstLines(programs: Record<string, string>): Record<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(HERE, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('no tsconfig');
  const files = new Map(
    Object.entries(programs).map(([name, text]) => [join(HERE, `__first-lines__/${name}.ts`), text]),
  );
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (f) => files.get(f) ?? readFile(f);
  host.fileExists = (f) => files.has(f) || fileExists(f);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, ...rest) => {
    const text = files.get(f);
    return text === undefined ? getSourceFile(f, lang, ...rest) : ts.createSourceFile(f, text, lang);
  };
  const program = ts.createProgram([...files.keys()], { ...config.options, noEmit: true }, host);
  const out: Record<string, string[]> = {};
  for (const [path, _] of files) {
    const name = path.slice(path.lastIndexOf('/') + 1, -3);
    const source = program.getSourceFile(path)!;
    out[name] = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(
      (d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]!,
    );
  }
  return out;
}
