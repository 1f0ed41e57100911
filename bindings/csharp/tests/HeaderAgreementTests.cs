// The P/Invoke layer against the header text: every function (name,
// argument count and types, return type, calling convention, library name),
// every constant, every struct layout. Also the loaded library: every
// declared entry point exported, the version and the status names agreeing.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using Cuabi.Interop;

namespace Cuabi.Tests
{
    internal static class HeaderAgreementTests
    {
        public static void Register()
        {
            Registry.Add("header: every function declared once, with its argument count and types", Functions);
            Registry.Add("header: no P/Invoke declaration beyond the header", NoExtraDeclarations);
            Registry.Add("header: the launch path's raw-handle declarations agree with the header", RawHandleDeclarations);
            Registry.Add("header: every constant equal, none extra", Constants);
            Registry.Add("header: safe enums match the CUABI_* constants", SafeEnums);
            Registry.Add("header: struct layouts computed from the header equal Marshal.SizeOf/OffsetOf", StructLayouts);
            Registry.Add("header: struct layouts and constants as compiled by gcc", GccCrossCheck);
            Registry.Add("library: exports every declared entry point", Exports);
            Registry.Add("library: version and status names agree with the header", VersionAndStatusNames);
        }

        private static List<MethodInfo> Declarations()
        {
            return typeof(NativeMethods).GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static)
                .Where(m => (m.Attributes & MethodAttributes.PinvokeImpl) != 0).ToList();
        }

        private static DllImportAttribute ImportOf(MethodInfo m)
        {
            return (DllImportAttribute)Attribute.GetCustomAttribute(m, typeof(DllImportAttribute));
        }

        private static string EntryPoint(MethodInfo m)
        {
            var a = ImportOf(m);
            return a != null && !string.IsNullOrEmpty(a.EntryPoint) ? a.EntryPoint : m.Name;
        }

        private static string Pascal(string cName)
        {
            // cuabi_host_buffer -> HostBuffer
            string s = cName.StartsWith("cuabi_") ? cName.Substring(6) : cName;
            return string.Concat(s.Split('_').Select(p => p.Length == 0 ? "" : char.ToUpperInvariant(p[0]) + p.Substring(1)));
        }

        private static readonly Dictionary<string, Type> Scalars = new Dictionary<string, Type>
        {
            { "int32_t", typeof(int) },
            { "uint32_t", typeof(uint) },
            { "uint64_t", typeof(ulong) },
            { "uint8_t", typeof(byte) },
            { "size_t", typeof(UIntPtr) },
            { "float", typeof(float) },
        };

        /// <summary>The C# type the mapping in NativeMethods.cs gives a C parameter or result.</summary>
        private static Type Expected(HeaderModel h, CFunction fn, string cType, string paramName, bool isReturn)
        {
            string t = cType;
            bool release = fn.Name.EndsWith("_release");
            if (t == "void" && isReturn)
                return typeof(void);
            string scalar = h.Resolve(t);
            if (Scalars.ContainsKey(scalar))
                return Scalars[scalar];
            if (h.HandleTypes.Contains(t))
                return release ? typeof(IntPtr) : HandleType(t);
            if (t.EndsWith("*") && !t.StartsWith("const ") && h.HandleTypes.Contains(t.TrimEnd('*').Trim()))
                return HandleType(t.TrimEnd('*').Trim()).MakeByRefType();
            switch (t)
            {
                case "const char*":
                    return isReturn ? typeof(IntPtr) : typeof(byte[]);
                case "char*":
                    return typeof(byte[]);
                case "void*":
                    return paramName == "buf" ? typeof(byte[]) : typeof(IntPtr);
                case "const void*":
                case "void* const*":
                case "const size_t*":
                case "const char* const*":
                    return typeof(IntPtr);
                case "void**":
                    return typeof(IntPtr).MakeByRefType();
            }
            if (t.StartsWith("const ") && t.EndsWith("*"))
            {
                string inner = t.Substring(6).TrimEnd('*').Trim();
                if (h.Structs.Any(s => s.Name == inner))
                    return StructType(inner).MakeByRefType();
            }
            if (t.EndsWith("*") && t.Count(c => c == '*') == 1 && !t.StartsWith("const "))
            {
                string inner = h.Resolve(t.TrimEnd('*').Trim());
                if (Scalars.ContainsKey(inner))
                    return Scalars[inner].MakeByRefType();
            }
            throw new TestFailure(fn.Name + ": no C# mapping known for C type '" + t + "' (" + paramName +
                                  "); extend NativeMethods.cs and this test together");
        }

        private static Type HandleType(string cHandle)
        {
            string name = "Cuabi.Interop.Safe" + Pascal(cHandle) + "Handle";
            Type t = typeof(NativeMethods).Assembly.GetType(name);
            if (t == null)
                throw new TestFailure("no SafeHandle type " + name + " for " + cHandle);
            return t;
        }

        private static Type StructType(string cStruct)
        {
            string name = "Cuabi.Interop." + Pascal(cStruct) + "Native";
            Type t = typeof(NativeMethods).Assembly.GetType(name);
            if (t == null)
                throw new TestFailure("no struct type " + name + " for " + cStruct);
            return t;
        }

        private static string Show(Type t)
        {
            return t.IsByRef ? "ref " + t.GetElementType().Name : t.Name;
        }

        private static void Functions()
        {
            var h = HeaderModel.Load();
            Assert.True(h.Functions.Count > 80, "the header parser found only " + h.Functions.Count + " functions in " + h.Path);
            var byEntry = Declarations().GroupBy(EntryPoint).ToDictionary(g => g.Key, g => g.ToList());
            var problems = new List<string>();
            foreach (var fn in h.Functions)
            {
                List<MethodInfo> found;
                if (!byEntry.TryGetValue(fn.Name, out found))
                {
                    problems.Add(fn.Name + ": not declared");
                    continue;
                }
                if (found.Count != 1)
                {
                    problems.Add(fn.Name + ": declared " + found.Count + " times");
                    continue;
                }
                MethodInfo m = found[0];
                var import = ImportOf(m);
                if (import == null)
                    problems.Add(fn.Name + ": no DllImportAttribute visible");
                else
                {
                    if (import.Value != NativeMethods.LibraryName)
                        problems.Add(fn.Name + ": binds to '" + import.Value + "', not '" + NativeMethods.LibraryName + "'");
                    if (import.CallingConvention != CallingConvention.Cdecl)
                        problems.Add(fn.Name + ": calling convention " + import.CallingConvention + ", not Cdecl");
                }
                Type ret = Expected(h, fn, fn.ReturnType, "(result)", true);
                if (m.ReturnType != ret)
                    problems.Add(fn.Name + ": returns " + Show(m.ReturnType) + ", header " + fn.ReturnType + " needs " + Show(ret));
                ParameterInfo[] ps = m.GetParameters();
                if (ps.Length != fn.Params.Count)
                {
                    problems.Add(string.Format("{0}: {1} arguments, the header has {2} ({3})", fn.Name, ps.Length,
                        fn.Params.Count, string.Join(", ", fn.Params)));
                    continue;
                }
                for (int i = 0; i < ps.Length; i++)
                {
                    CParam c = fn.Params[i];
                    Type want = Expected(h, fn, c.Type, c.Name, false);
                    if (ps[i].ParameterType != want)
                        problems.Add(string.Format("{0}: argument {1} ({2} {3}) is {4}, should be {5}", fn.Name, i,
                            c.Type, c.Name, Show(ps[i].ParameterType), Show(want)));
                    string csName = ps[i].Name.TrimStart('@');
                    if (csName != c.Name)
                        problems.Add(string.Format("{0}: argument {1} is named {2}, the header says {3}", fn.Name, i, csName, c.Name));
                }
            }
            Assert.True(problems.Count == 0, "NativeMethods disagrees with " + h.Path + ":\n" + string.Join("\n", problems));
        }

        private static void NoExtraDeclarations()
        {
            var h = HeaderModel.Load();
            var names = new HashSet<string>(h.Functions.Select(f => f.Name));
            var extra = Declarations().Select(EntryPoint).Where(n => !names.Contains(n)).ToList();
            Assert.True(extra.Count == 0, "declared but not in the header: " + string.Join(", ", extra));
            Assert.Equal(h.Functions.Count, Declarations().Count, "declaration count");
        }

        /// <summary>
        /// P/Invoke declarations outside NativeMethods (the launch path's, with
        /// raw handle values): each names a header function and has its
        /// argument count and types, except that a handle may be an IntPtr.
        /// </summary>
        private static void RawHandleDeclarations()
        {
            var h = HeaderModel.Load();
            var functions = h.Functions.ToDictionary(f => f.Name);
            var others = typeof(NativeMethods).Assembly.GetTypes().Where(t => t != typeof(NativeMethods))
                .SelectMany(t => t.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static))
                .Where(m => (m.Attributes & MethodAttributes.PinvokeImpl) != 0)
                .Where(m => ImportOf(m) != null && ImportOf(m).Value == NativeMethods.LibraryName).ToList();
            Assert.True(others.Count >= 2, "found only " + others.Count + " raw-handle declarations (cuabi_launch_plan_launch and " +
                                           "cuabi_function_launch_packed are expected)");
            var problems = new List<string>();
            foreach (MethodInfo m in others)
            {
                string where = m.DeclaringType.Name + "." + m.Name;
                CFunction fn;
                if (!functions.TryGetValue(EntryPoint(m), out fn))
                {
                    problems.Add(where + ": " + EntryPoint(m) + " is not in the header");
                    continue;
                }
                if (ImportOf(m).CallingConvention != CallingConvention.Cdecl)
                    problems.Add(where + ": calling convention " + ImportOf(m).CallingConvention + ", not Cdecl");
                Type ret = Expected(h, fn, fn.ReturnType, "(result)", true);
                if (m.ReturnType != ret)
                    problems.Add(where + ": returns " + Show(m.ReturnType) + ", the header needs " + Show(ret));
                ParameterInfo[] ps = m.GetParameters();
                if (ps.Length != fn.Params.Count)
                {
                    problems.Add(where + ": " + ps.Length + " arguments, the header has " + fn.Params.Count);
                    continue;
                }
                for (int i = 0; i < ps.Length; i++)
                {
                    CParam c = fn.Params[i];
                    Type want = h.HandleTypes.Contains(c.Type) ? typeof(IntPtr) : Expected(h, fn, c.Type, c.Name, false);
                    if (ps[i].ParameterType != want)
                        problems.Add(string.Format("{0}: argument {1} ({2} {3}) is {4}, should be {5}", where, i, c.Type, c.Name,
                            Show(ps[i].ParameterType), Show(want)));
                    if (ps[i].Name.TrimStart('@') != c.Name)
                        problems.Add(string.Format("{0}: argument {1} is named {2}, the header says {3}", where, i, ps[i].Name, c.Name));
                }
            }
            Assert.True(problems.Count == 0, string.Join("\n", problems));
        }

        private static Dictionary<string, object> CSharpConstants()
        {
            return typeof(NativeMethods).GetFields(BindingFlags.Public | BindingFlags.Static)
                .Where(f => f.IsLiteral && f.Name.StartsWith("CUABI_"))
                .ToDictionary(f => f.Name, f => f.GetRawConstantValue());
        }

        private static readonly HashSet<string> NonValueDefines = new HashSet<string>
        {
            "CUABI_CALL", "CUABI_API", "CUABI_CUABI_H", "CUABI_LAUNCH_CONFIG_INIT", "CUABI_COMPILE_DESC_INIT",
        };

        private static void Constants()
        {
            var h = HeaderModel.Load();
            var cs = CSharpConstants();
            var problems = new List<string>();
            foreach (var kv in h.OtherDefines)
                if (!NonValueDefines.Contains(kv.Key))
                    problems.Add("#define " + kv.Key + " " + kv.Value + ": not understood by the test; map it");
            foreach (var kv in h.Constants)
            {
                object v;
                if (!cs.TryGetValue(kv.Key, out v))
                    problems.Add(kv.Key + " = " + kv.Value + ": missing in NativeMethods");
                else if (Convert.ToInt64(v, CultureInfo.InvariantCulture) != kv.Value)
                    problems.Add(kv.Key + ": NativeMethods has " + v + ", the header " + kv.Value);
            }
            foreach (var kv in h.StringConstants)
            {
                object v;
                if (!cs.TryGetValue(kv.Key, out v))
                    problems.Add(kv.Key + ": missing in NativeMethods");
                else if (!(v is string) || (string)v != kv.Value)
                    problems.Add(kv.Key + ": NativeMethods has \"" + v + "\", the header \"" + kv.Value + "\"");
            }
            foreach (string name in cs.Keys)
                if (!h.Constants.ContainsKey(name) && !h.StringConstants.ContainsKey(name))
                    problems.Add(name + ": in NativeMethods but not in the header");
            Assert.True(h.Constants.Count >= 40, "the header parser found only " + h.Constants.Count + " constants");
            Assert.True(problems.Count == 0, string.Join("\n", problems));
        }

        private static string Snake(string pascal)
        {
            var sb = new StringBuilder();
            for (int i = 0; i < pascal.Length; i++)
            {
                char c = pascal[i];
                if (i > 0 && char.IsUpper(c) && char.IsLower(pascal[i - 1]))
                    sb.Append('_');
                sb.Append(char.ToUpperInvariant(c));
            }
            return sb.ToString();
        }

        private static void EnumAgainst(HeaderModel h, Type e, Func<string, string> cName, Func<string, bool> isMember,
            string skip, List<string> problems)
        {
            var seen = new HashSet<string>();
            foreach (string member in Enum.GetNames(e))
            {
                if (member == skip)
                    continue;
                string c = cName(member);
                seen.Add(c);
                long v;
                long mine = Convert.ToInt64(Enum.Parse(e, member), CultureInfo.InvariantCulture);
                if (!h.Constants.TryGetValue(c, out v))
                    problems.Add(e.Name + "." + member + ": the header has no " + c);
                else if (v != mine)
                    problems.Add(e.Name + "." + member + " = " + mine + ", but " + c + " = " + v);
            }
            foreach (string c in h.Constants.Keys.Where(isMember))
                if (!seen.Contains(c))
                    problems.Add(c + ": no member in " + e.Name);
        }

        private static void SafeEnums()
        {
            var h = HeaderModel.Load();
            var problems = new List<string>();
            EnumAgainst(h, typeof(CudaStatus), m => m == "Success" ? "CUABI_SUCCESS" : "CUABI_ERROR_" + Snake(m),
                c => c == "CUABI_SUCCESS" || c.StartsWith("CUABI_ERROR_"), null, problems);
            EnumAgainst(h, typeof(StreamFlags), m => "CUABI_STREAM_" + Snake(m), c => c.StartsWith("CUABI_STREAM_"), "None", problems);
            EnumAgainst(h, typeof(EventFlags), m => "CUABI_EVENT_" + Snake(m), c => c.StartsWith("CUABI_EVENT_"), "None", problems);
            EnumAgainst(h, typeof(CaptureMode), m => "CUABI_CAPTURE_" + Snake(m), c => c.StartsWith("CUABI_CAPTURE_"), null, problems);
            EnumAgainst(h, typeof(CompileOutput), m => "CUABI_OUTPUT_" + Snake(m), c => c.StartsWith("CUABI_OUTPUT_"), null, problems);
            EnumAgainst(h, typeof(FunctionAttribute), m => "CUABI_FUNC_" + Snake(m), c => c.StartsWith("CUABI_FUNC_"), null, problems);
            long members = Enum.GetValues(typeof(CudaStatus)).Length;
            if (members != h.Constants["CUABI_STATUS_COUNT"])
                problems.Add("CudaStatus has " + members + " members, CUABI_STATUS_COUNT is " + h.Constants["CUABI_STATUS_COUNT"]);
            Assert.True(problems.Count == 0, string.Join("\n", problems));
        }

        private static int CSize(HeaderModel h, string cType, out int align)
        {
            string t = h.Resolve(cType);
            if (t.EndsWith("*") || t == "size_t" || t == "uint64_t" || t == "int64_t")
            {
                align = 8;
                return 8;
            }
            if (t == "int32_t" || t == "uint32_t" || t == "float")
            {
                align = 4;
                return 4;
            }
            if (t == "uint8_t" || t == "int8_t")
            {
                align = 1;
                return 1;
            }
            throw new TestFailure("struct field type '" + cType + "' has no known size; extend the test");
        }

        private static Type FieldType(HeaderModel h, string cType)
        {
            string t = h.Resolve(cType);
            if (t.EndsWith("*"))
                return typeof(IntPtr);
            if (Scalars.ContainsKey(t))
                return t == "size_t" ? typeof(UIntPtr) : Scalars[t];
            throw new TestFailure("struct field type '" + cType + "' has no C# mapping; extend the test");
        }

        private static void StructLayouts()
        {
            if (IntPtr.Size != 8)
                throw new SkipException("the layouts are computed for LP64");
            var h = HeaderModel.Load();
            Assert.True(h.Structs.Count >= 2, "the header parser found " + h.Structs.Count + " structs");
            var problems = new List<string>();
            foreach (var st in h.Structs)
            {
                Type cs = StructType(st.Name);
                var csFields = cs.GetFields(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance).ToList();
                int offset = 0, maxAlign = 1;
                foreach (var f in st.Fields)
                {
                    int align;
                    int size = CSize(h, f.Type, out align);
                    offset = (offset + align - 1) / align * align;
                    maxAlign = Math.Max(maxAlign, align);
                    FieldInfo field = csFields.FirstOrDefault(x => x.Name == f.Name);
                    if (field == null)
                        problems.Add(cs.Name + ": no field " + f.Name + " (" + f.Type + ")");
                    else
                    {
                        if (field.FieldType != FieldType(h, f.Type))
                            problems.Add(cs.Name + "." + f.Name + " is " + field.FieldType.Name + ", C type " + f.Type);
                        int got = (int)Marshal.OffsetOf(cs, f.Name);
                        if (got != offset)
                            problems.Add(cs.Name + "." + f.Name + " at offset " + got + ", C offset " + offset);
                    }
                    offset += size;
                }
                int total = (offset + maxAlign - 1) / maxAlign * maxAlign;
                if (Marshal.SizeOf(cs) != total)
                    problems.Add(cs.Name + ": Marshal.SizeOf = " + Marshal.SizeOf(cs) + ", sizeof(" + st.Name + ") = " + total);
                foreach (var extra in csFields.Where(x => st.Fields.All(f => f.Name != x.Name)))
                    problems.Add(cs.Name + "." + extra.Name + ": not a field of " + st.Name);
            }
            Assert.True(problems.Count == 0, string.Join("\n", problems));
        }

        private static string FindGcc()
        {
            string env = Environment.GetEnvironmentVariable("CC");
            var candidates = new List<string>();
            if (!string.IsNullOrEmpty(env))
                candidates.Add(env);
            foreach (string dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':'))
                if (dir.Length > 0)
                {
                    candidates.Add(Path.Combine(dir, "gcc"));
                    candidates.Add(Path.Combine(dir, "cc"));
                }
            return candidates.FirstOrDefault(File.Exists);
        }

        private static void GccCrossCheck()
        {
            var h = HeaderModel.Load();
            string gcc = FindGcc();
            if (gcc == null)
                throw new SkipException("no C compiler (gcc/cc/$CC) on PATH; the parsed layouts are still checked");
            string dir = Path.Combine(Path.GetTempPath(), "cuabi-cs-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            try
            {
                var c = new StringBuilder();
                c.Append("#include <stdio.h>\n#include <stddef.h>\n#include \"cuabi/cuabi.h\"\nint main(void) {\n");
                foreach (var st in h.Structs)
                {
                    c.AppendFormat("  printf(\"sizeof {0} %zu\\n\", sizeof({0}));\n", st.Name);
                    foreach (var f in st.Fields)
                        c.AppendFormat("  printf(\"offsetof {0}.{1} %zu\\n\", offsetof({0}, {1}));\n", st.Name, f.Name);
                }
                foreach (var k in h.Constants.Keys)
                    c.AppendFormat("  printf(\"const {0} %lld\\n\", (long long)({0}));\n", k);
                c.Append("  return 0;\n}\n");
                string src = Path.Combine(dir, "layout.c");
                string exe = Path.Combine(dir, "layout");
                File.WriteAllText(src, c.ToString());
                string include = Path.GetDirectoryName(Path.GetDirectoryName(h.Path));
                var build = RunProcess(gcc, string.Format("-std=c11 -Wall -Werror -I\"{0}\" -o \"{1}\" \"{2}\"", include, exe, src));
                Assert.True(build.Item1 == 0, "gcc failed:\n" + build.Item2);
                var run = RunProcess(exe, "");
                Assert.True(run.Item1 == 0, "layout program failed:\n" + run.Item2);
                var problems = new List<string>();
                int lines = 0;
                foreach (string line in run.Item2.Split(new[] { '\n' }, StringSplitOptions.RemoveEmptyEntries))
                {
                    lines++;
                    string[] parts = line.Trim().Split(' ');
                    long value = long.Parse(parts[2], CultureInfo.InvariantCulture);
                    if (parts[0] == "sizeof")
                    {
                        int mine = Marshal.SizeOf(StructType(parts[1]));
                        if (mine != value)
                            problems.Add("sizeof(" + parts[1] + ") = " + value + ", Marshal.SizeOf = " + mine);
                    }
                    else if (parts[0] == "offsetof")
                    {
                        string[] sf = parts[1].Split('.');
                        Type st = StructType(sf[0]);
                        if (st.GetField(sf[1], BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance) == null)
                            problems.Add(parts[1] + ": no such field in " + st.Name);
                        else if ((int)Marshal.OffsetOf(st, sf[1]) != value)
                            problems.Add("offsetof(" + parts[1] + ") = " + value + ", Marshal.OffsetOf = " + (int)Marshal.OffsetOf(st, sf[1]));
                    }
                    else
                    {
                        object mine;
                        if (!CSharpConstants().TryGetValue(parts[1], out mine))
                            problems.Add(parts[1] + ": missing in NativeMethods");
                        else if (Convert.ToInt64(mine, CultureInfo.InvariantCulture) != value)
                            problems.Add(parts[1] + " = " + value + " (gcc), NativeMethods has " + mine);
                    }
                }
                Assert.True(lines == h.Constants.Count + h.Structs.Sum(s => 1 + s.Fields.Count), "layout program printed " + lines + " lines");
                Assert.True(problems.Count == 0, string.Join("\n", problems));
            }
            finally
            {
                try
                {
                    Directory.Delete(dir, true);
                }
                catch (IOException)
                {
                }
            }
        }

        internal static Tuple<int, string> RunProcess(string file, string args)
        {
            var psi = new ProcessStartInfo(file, args)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using (var p = Process.Start(psi))
            {
                string err;
                string output = Child.ReadBoth(p, out err);
                return Tuple.Create(p.ExitCode, output + err);
            }
        }

        private static void Exports()
        {
            var missing = new List<string>();
            foreach (var m in Declarations())
            {
                IntPtr address;
                if (!CuabiLibrary.TryGetExport(EntryPoint(m), out address))
                    missing.Add(EntryPoint(m));
            }
            Assert.True(missing.Count == 0, CuabiLibrary.LoadedFrom + " does not export: " + string.Join(", ", missing));
        }

        private static void VersionAndStatusNames()
        {
            var h = HeaderModel.Load();
            Assert.Equal(h.Constants["CUABI_VERSION_NUMBER"], (long)NativeMethods.cuabi_version(), "cuabi_version() vs the header");
            Assert.Equal(h.StringConstants["CUABI_VERSION_STRING"], Utf8.FromNative(NativeMethods.cuabi_version_string()),
                "cuabi_version_string() vs the header");
            Assert.Equal((int)h.Constants["CUABI_VERSION_NUMBER"], Cuda.Version, "Cuda.Version");
            var statusNames = h.Constants.Where(kv => kv.Key == "CUABI_SUCCESS" || kv.Key.StartsWith("CUABI_ERROR_"))
                .ToDictionary(kv => kv.Value, kv => kv.Key);
            for (int s = 0; s < h.Constants["CUABI_STATUS_COUNT"]; s++)
            {
                Assert.True(statusNames.ContainsKey(s), "the header defines no status " + s);
                Assert.Equal(statusNames[s], Cuda.StatusName((CudaStatus)s), "cuabi_status_get_name(" + s + ")");
                Assert.True(!string.IsNullOrEmpty(Cuda.StatusDescription((CudaStatus)s)), "cuabi_status_get_description(" + s + ") is empty");
            }
            Assert.Equal("CUABI_ERROR_UNKNOWN", Cuda.StatusName((CudaStatus)(int)h.Constants["CUABI_STATUS_COUNT"]),
                "cuabi_status_get_name(CUABI_STATUS_COUNT)");
        }
    }
}
