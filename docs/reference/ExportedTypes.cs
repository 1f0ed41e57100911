// Prints an assembly's public API for the C# reference (scripts/docs): each
// public type's full name on a line of its own, then a line
// "<type>\t<member>" for each of its public or protected members (a
// constructor is #ctor, as in XML documentation IDs). mcs's XML
// documentation also holds the comments of internal types and members,
// which the reference leaves out.
//
//   mono ExportedTypes.exe Cuabi.dll
using System;
using System.Reflection;

static class ExportedTypes {
  static bool Visible(MethodBase m) {
    return m != null && (m.IsPublic || m.IsFamily || m.IsFamilyOrAssembly);
  }

  static bool Visible(MemberInfo m) {
    MethodBase method = m as MethodBase;
    if (method != null) return Visible(method);
    FieldInfo f = m as FieldInfo;
    if (f != null) return f.IsPublic || f.IsFamily || f.IsFamilyOrAssembly;
    PropertyInfo p = m as PropertyInfo;
    if (p != null) return Visible(p.GetGetMethod(true)) || Visible(p.GetSetMethod(true));
    EventInfo e = m as EventInfo;
    if (e != null) return Visible(e.GetAddMethod(true));
    return false;
  }

  static int Main(string[] args) {
    if (args.Length != 1) {
      Console.Error.WriteLine("usage: ExportedTypes.exe ASSEMBLY");
      return 2;
    }
    const BindingFlags all = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance |
                             BindingFlags.Static | BindingFlags.DeclaredOnly;
    foreach (Type t in Assembly.LoadFrom(args[0]).GetExportedTypes()) {
      string name = t.FullName.Replace('+', '.');
      Console.WriteLine(name);
      foreach (MemberInfo m in t.GetMembers(all)) {
        if (m is Type || !Visible(m)) continue;
        Console.WriteLine(name + "\t" + (m.Name == ".ctor" || m.Name == ".cctor" ? "#ctor" : m.Name));
      }
    }
    return 0;
  }
}
