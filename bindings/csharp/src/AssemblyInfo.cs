using System.Runtime.CompilerServices;

[assembly: InternalsVisibleTo("Cuabi.Tests")]
