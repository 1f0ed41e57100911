// A small reader of include/cuabi/cuabi.h: its functions, constants,
// typedefs and structs, enough to check the P/Invoke layer against it.
// It understands the header's own style, and fails loudly on what it does
// not understand, so that a header change cannot slip past the checks.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;

namespace Cuabi.Tests
{
    internal sealed class CParam
    {
        public string Type; // normalised, e.g. "const char* const*"
        public string Name;

        public override string ToString()
        {
            return Type + " " + Name;
        }
    }

    internal sealed class CFunction
    {
        public string Name;
        public string ReturnType;
        public List<CParam> Params = new List<CParam>();
    }

    internal sealed class CField
    {
        public string Type;
        public string Name;
    }

    internal sealed class CStruct
    {
        public string Name;
        public List<CField> Fields = new List<CField>();
    }

    internal sealed class HeaderModel
    {
        public readonly string Path;
        public readonly List<CFunction> Functions = new List<CFunction>();
        // Every integer constant: numeric #defines and enum members.
        public readonly Dictionary<string, long> Constants = new Dictionary<string, long>();
        public readonly Dictionary<string, string> StringConstants = new Dictionary<string, string>();
        // #defines that are neither (CUABI_API, the _INIT initialisers, ...).
        public readonly Dictionary<string, string> OtherDefines = new Dictionary<string, string>();
        // typedef <scalar> <name>;  e.g. cuabi_status -> int32_t
        public readonly Dictionary<string, string> ScalarTypedefs = new Dictionary<string, string>();
        // typedef struct x_s* <name>;  the opaque handle types
        public readonly HashSet<string> HandleTypes = new HashSet<string>();
        public readonly List<CStruct> Structs = new List<CStruct>();

        private HeaderModel(string path)
        {
            Path = path;
        }

        /// <summary>The header: $CUABI_HEADER, else include/cuabi/cuabi.h above the working folder or this program.</summary>
        public static string Find()
        {
            string env = Environment.GetEnvironmentVariable("CUABI_HEADER");
            if (!string.IsNullOrEmpty(env))
                return env;
            var starts = new List<string> { Directory.GetCurrentDirectory() };
            try
            {
                string loc = typeof(HeaderModel).Assembly.Location;
                if (!string.IsNullOrEmpty(loc))
                    starts.Add(System.IO.Path.GetDirectoryName(System.IO.Path.GetFullPath(loc)));
            }
            catch (Exception)
            {
            }
            foreach (string start in starts)
            {
                for (var dir = new DirectoryInfo(start); dir != null; dir = dir.Parent)
                {
                    string candidate = System.IO.Path.Combine(dir.FullName, "include", "cuabi", "cuabi.h");
                    if (File.Exists(candidate))
                        return candidate;
                }
            }
            return null;
        }

        private static HeaderModel cached;

        public static HeaderModel Load()
        {
            if (cached != null)
                return cached;
            string path = Find();
            if (path == null || !File.Exists(path))
                throw new TestFailure(
                    "include/cuabi/cuabi.h not found above the working folder; set CUABI_HEADER to its path");
            var m = new HeaderModel(path);
            m.Parse(File.ReadAllText(path));
            cached = m;
            return m;
        }

        public static string NormaliseType(string t)
        {
            t = Regex.Replace(t, @"\s+", " ").Trim();
            t = Regex.Replace(t, @"\s*\*\s*", "* ").Trim();
            t = Regex.Replace(t, @"\*\s+\*", "**");
            t = Regex.Replace(t, @"\*\s+\*", "**");
            return t.Trim();
        }

        private void Parse(string text)
        {
            text = text.Replace("\r\n", "\n");
            text = Regex.Replace(text, @"/\*.*?\*/", " ", RegexOptions.Singleline);
            text = Regex.Replace(text, @"//[^\n]*", "");
            text = Regex.Replace(text, @"\\\n", " ");

            // Preprocessor lines: collect the defines, then drop them all.
            var code = new List<string>();
            foreach (string line in text.Split('\n'))
            {
                string trimmed = line.Trim();
                if (!trimmed.StartsWith("#"))
                {
                    code.Add(line);
                    continue;
                }
                Match d = Regex.Match(trimmed, @"^#\s*define\s+(\w+)(\([^)]*\))?\s*(.*)$");
                if (!d.Success || !d.Groups[1].Value.StartsWith("CUABI_"))
                    continue;
                string name = d.Groups[1].Value;
                string value = d.Groups[3].Value.Trim();
                if (d.Groups[2].Success && d.Groups[2].Length > 0)
                {
                    OtherDefines[name] = d.Groups[2].Value + " " + value;
                    continue;
                }
                if (value.StartsWith("\"") && value.EndsWith("\"") && value.Length >= 2)
                {
                    StringConstants[name] = value.Substring(1, value.Length - 2);
                    continue;
                }
                long number;
                if (value.Length > 0 && TryEvaluate(value, out number))
                    Constants[name] = number;
                else
                    OtherDefines[name] = value;
            }
            string body = string.Join("\n", code);

            foreach (Match e in Regex.Matches(body, @"\benum\s*\{([^}]*)\}\s*;"))
            {
                long next = 0;
                foreach (string raw in e.Groups[1].Value.Split(','))
                {
                    string item = raw.Trim();
                    if (item.Length == 0)
                        continue;
                    Match kv = Regex.Match(item, @"^(\w+)\s*(?:=\s*(.+))?$", RegexOptions.Singleline);
                    if (!kv.Success)
                        throw new FormatException("enum item not understood: " + item);
                    long value = next;
                    if (kv.Groups[2].Success && !TryEvaluate(kv.Groups[2].Value, out value))
                        throw new FormatException("enum value not understood: " + item);
                    Constants[kv.Groups[1].Value] = value;
                    next = value + 1;
                }
            }

            foreach (Match t in Regex.Matches(body, @"\btypedef\s+((?:unsigned\s+)?\w+)\s+(\w+)\s*;"))
                ScalarTypedefs[t.Groups[2].Value] = t.Groups[1].Value;
            foreach (Match t in Regex.Matches(body, @"\btypedef\s+struct\s+\w+\s*\*\s*(\w+)\s*;"))
                HandleTypes.Add(t.Groups[1].Value);

            foreach (Match s in Regex.Matches(body, @"\btypedef\s+struct\s+(\w+)\s*\{([^}]*)\}\s*(\w+)\s*;"))
            {
                var st = new CStruct { Name = s.Groups[3].Value };
                foreach (string rawDecl in s.Groups[2].Value.Split(';'))
                {
                    string decl = Regex.Replace(rawDecl, @"\s+", " ").Trim();
                    if (decl.Length == 0)
                        continue;
                    // "T a, b, c" or "const char* const* name"
                    Match first = Regex.Match(decl, @"^(.*?[\s*])(\w+)((?:\s*,\s*\w+)*)$");
                    if (!first.Success)
                        throw new FormatException("struct field not understood: " + decl);
                    string type = NormaliseType(first.Groups[1].Value);
                    st.Fields.Add(new CField { Type = type, Name = first.Groups[2].Value });
                    foreach (string more in first.Groups[3].Value.Split(new[] { ',' }, StringSplitOptions.RemoveEmptyEntries))
                        st.Fields.Add(new CField { Type = type, Name = more.Trim() });
                }
                Structs.Add(st);
            }

            foreach (Match f in Regex.Matches(body, @"\bCUABI_API\s+([^;{}()]+?)\s*\bCUABI_CALL\s+(\w+)\s*\(([^)]*)\)\s*;"))
            {
                var fn = new CFunction { Name = f.Groups[2].Value, ReturnType = NormaliseType(f.Groups[1].Value) };
                string args = Regex.Replace(f.Groups[3].Value, @"\s+", " ").Trim();
                if (args != "void" && args.Length > 0)
                {
                    foreach (string rawArg in args.Split(','))
                    {
                        string arg = rawArg.Trim();
                        Match pm = Regex.Match(arg, @"^(.*?[\s*])(\w+)$");
                        if (!pm.Success)
                            throw new FormatException(fn.Name + ": parameter not understood: " + arg);
                        fn.Params.Add(new CParam { Type = NormaliseType(pm.Groups[1].Value), Name = pm.Groups[2].Value });
                    }
                }
                Functions.Add(fn);
            }
            int declared = Regex.Matches(body, @"\bCUABI_API\b").Count;
            if (declared != Functions.Count)
                throw new FormatException(string.Format(
                    "{0} CUABI_API declarations but only {1} understood as functions", declared, Functions.Count));
        }

        /// <summary>The scalar C type behind a typedef chain (cuabi_status -> int32_t).</summary>
        public string Resolve(string type)
        {
            string t = type;
            for (int i = 0; i < 8 && ScalarTypedefs.ContainsKey(t); i++)
                t = ScalarTypedefs[t];
            return t;
        }

        // ---- integer constant expressions: literals, names, + - * / << >> | & ~ ( ) ----

        private bool TryEvaluate(string expr, out long value)
        {
            try
            {
                var tokens = Regex.Matches(expr, @"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|\w+|<<|>>|[-+*/|&~()]")
                    .Cast<Match>().Select(m => m.Value).ToList();
                string joined = string.Concat(tokens);
                if (joined != Regex.Replace(expr, @"\s+", ""))
                {
                    value = 0;
                    return false;
                }
                int pos = 0;
                value = ParseOr(tokens, ref pos);
                return pos == tokens.Count;
            }
            catch (Exception)
            {
                value = 0;
                return false;
            }
        }

        private long ParseOr(List<string> t, ref int p)
        {
            long v = ParseAnd(t, ref p);
            while (p < t.Count && t[p] == "|") { p++; v |= ParseAnd(t, ref p); }
            return v;
        }

        private long ParseAnd(List<string> t, ref int p)
        {
            long v = ParseShift(t, ref p);
            while (p < t.Count && t[p] == "&") { p++; v &= ParseShift(t, ref p); }
            return v;
        }

        private long ParseShift(List<string> t, ref int p)
        {
            long v = ParseAdd(t, ref p);
            while (p < t.Count && (t[p] == "<<" || t[p] == ">>"))
            {
                string op = t[p++];
                int r = (int)ParseAdd(t, ref p);
                v = op == "<<" ? v << r : v >> r;
            }
            return v;
        }

        private long ParseAdd(List<string> t, ref int p)
        {
            long v = ParseMul(t, ref p);
            while (p < t.Count && (t[p] == "+" || t[p] == "-"))
            {
                string op = t[p++];
                long r = ParseMul(t, ref p);
                v = op == "+" ? v + r : v - r;
            }
            return v;
        }

        private long ParseMul(List<string> t, ref int p)
        {
            long v = ParseUnary(t, ref p);
            while (p < t.Count && (t[p] == "*" || t[p] == "/"))
            {
                string op = t[p++];
                long r = ParseUnary(t, ref p);
                v = op == "*" ? v * r : v / r;
            }
            return v;
        }

        private long ParseUnary(List<string> t, ref int p)
        {
            string tok = t[p++];
            if (tok == "-")
                return -ParseUnary(t, ref p);
            if (tok == "~")
                return ~ParseUnary(t, ref p);
            if (tok == "(")
            {
                long v = ParseOr(t, ref p);
                if (t[p++] != ")")
                    throw new FormatException("')' expected");
                return v;
            }
            string digits = tok.TrimEnd('u', 'U', 'l', 'L');
            if (digits.StartsWith("0x") || digits.StartsWith("0X"))
                return long.Parse(digits.Substring(2), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            if (char.IsDigit(digits[0]))
                return long.Parse(digits, CultureInfo.InvariantCulture);
            long named;
            if (Constants.TryGetValue(tok, out named))
                return named;
            throw new FormatException("unknown name " + tok);
        }
    }
}
