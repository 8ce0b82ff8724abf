import sys
from setuptools import setup, Extension
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    def build_extensions(self):
        flags = ["/O2"] if self.compiler.compiler_type == "msvc" else ["-O3", "-std=c11"]
        for ext in self.extensions:
            ext.extra_compile_args = flags
        super().build_extensions()


setup(
    name="fastsum",
    version="0.1.0",
    ext_modules=[Extension("fastsum", ["src/fastsum.c"])],
    cmdclass={"build_ext": BuildExt},
)
